package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Recounting the media library, for items written before its counter
// and its usage entries existed: media completed before the counter are
// not in it, and covers, bodies, avatars, logos and icons named before
// usage tracking are not in their items' usedBy.
//
// The counter is set from a consistent Scan of the library under the
// counter's change number (countMedia adds one to "changes" with every
// completion and deletion): the number is read first, the library
// scanned, and the counter written on the condition that the number is
// unchanged, else all three again. A completion or deletion that commits
// before the read is in the scan; one that commits after it changes the
// number, so the write fails and the recount starts over. Usage entries
// are only added, each in a transaction that checks that the post,
// author or site that names the item still has the version scanned: an
// entry of a use that ended meanwhile is never added.

// recountAttempts bounds the rounds of a recount that concurrent writes
// keep failing.
const recountAttempts = 8

// ErrRecountBusy means the library kept changing during every round of a
// recount: run it again when it is quieter.
var ErrRecountBusy = errors.New("the media library kept changing during the recount")

// MediaRecount is what RecountMedia found and did.
type MediaRecount struct {
	// Before is what the counter held, After what it holds now.
	Before, After MediaUsage
	// UsesAdded is the number of usage entries added to items' usedBy.
	UsesAdded int
}

// RecountMedia sets the library's counter to the bytes and files of its
// items and adds the usage entries that posts, authors and the site
// need and lack. It is safe beside completions, deletions and post
// writes, and running it again changes nothing; it returns
// ErrRecountBusy when writes failed every round, or the error of a read
// or a write.
func (s *Store) RecountMedia(ctx context.Context) (*MediaRecount, error) {
	var r MediaRecount
	for attempt := 1; ; attempt++ {
		var counter struct {
			mediaUsageItem
			Changes *int64 `dynamodbav:"changes"`
		}
		err := s.db.Get(ctx, s.ks.MediaUsage(), true, &counter)
		exists := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("recount media: %w", err)
		}
		lib, err := s.scanLibrary(ctx)
		if err != nil {
			return nil, err
		}
		added, stale, err := s.addMissingUses(ctx, lib)
		r.UsesAdded += added
		if err != nil {
			return nil, err
		}
		var cond expression.ConditionBuilder
		switch {
		case !exists:
			cond = dynamo.CondNotExists()
		case counter.Changes == nil:
			cond = expression.Name("changes").AttributeNotExists()
		default:
			cond = expression.Name("changes").Equal(expression.Value(*counter.Changes))
		}
		upd := expression.Set(expression.Name("type"), expression.Value(typeMediaUsage)).
			Set(expression.Name("bytes"), expression.Value(lib.usage.Bytes)).
			Set(expression.Name("files"), expression.Value(lib.usage.Files))
		wrote, err := s.db.UpdateIf(ctx, s.ks.MediaUsage(), upd, cond)
		if err != nil {
			return nil, fmt.Errorf("recount media: %w", err)
		}
		if attempt == 1 {
			r.Before = MediaUsage{Bytes: counter.Bytes, Files: counter.Files}
		}
		if wrote && !stale {
			r.After = lib.usage
			return &r, nil
		}
		if attempt == recountAttempts {
			return &r, ErrRecountBusy
		}
		if err := dynamo.Sleep(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// library is what a Scan of a publication found of its media library and
// of what names its items.
type library struct {
	usage MediaUsage
	// usedBy are the usage entries of each media item in the library.
	usedBy map[string][]string
	// wanted are the entries each item needs, with the item that names
	// it and the version it was scanned at.
	wanted map[string][]use
}

// use is an entry of usedBy that an item at key and version needs.
type use struct {
	entry   string
	key     dynamo.Key
	version int64
}

// scanLibrary reads the publication's media items, posts, post bodies,
// authors and site settings with one consistent Scan.
func (s *Store) scanLibrary(ctx context.Context) (*library, error) {
	lib := &library{usedBy: map[string][]string{}, wanted: map[string][]use{}}
	kinds := expression.Name("type").In(expression.Value(typeMedia), expression.Value(typePost), expression.Value(typePostBody),
		expression.Value(typeAuthor), expression.Value(typeSite))
	expr, err := expression.NewBuilder().WithFilter(kinds).Build()
	if err != nil {
		return nil, fmt.Errorf("recount media: %w", err)
	}
	posts, bodies := map[string]*postItem{}, map[string]*bodyItem{}
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		FilterExpression: expr.Filter(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("recount media: scan: %w", err)
		}
		for _, av := range page.Items {
			if err := lib.add(s, av, posts, bodies); err != nil {
				return nil, fmt.Errorf("recount media: %w", err)
			}
		}
	}
	for id, p := range posts {
		if b := bodies[id]; b != nil {
			p.Body, p.HTML = b.Body, b.HTML
		}
		for ref, mediaID := range mediaRefs(p, true) {
			as, _, _ := strings.Cut(ref, "\x00")
			lib.want(mediaID, use{entry: as + ":" + id, key: s.ks.Post(id), version: p.Version})
		}
	}
	return lib, nil
}

// add counts the scanned item av in lib, or keeps it in posts or bodies.
func (lib *library) add(s *Store, av map[string]types.AttributeValue, posts map[string]*postItem, bodies map[string]*bodyItem) error {
	var head struct {
		Type string `dynamodbav:"type"`
	}
	if err := attributevalue.UnmarshalMap(av, &head); err != nil {
		return err
	}
	var err error
	switch head.Type {
	case typeMedia:
		var m mediaItem
		if err = attributevalue.UnmarshalMap(av, &m); err == nil {
			lib.usage.Bytes += m.ByteSize
			lib.usage.Files++
			lib.usedBy[m.ID] = m.UsedBy
		}
	case typePost:
		var p postItem
		if err = attributevalue.UnmarshalMap(av, &p); err == nil {
			posts[p.ID] = &p
		}
	case typePostBody:
		var b bodyItem
		if err = attributevalue.UnmarshalMap(av, &b); err == nil {
			bodies[b.ID] = &b
		}
	case typeAuthor:
		var a authorItem
		if err = attributevalue.UnmarshalMap(av, &a); err == nil && a.Avatar.libraryID() != "" {
			lib.want(a.Avatar.libraryID(), use{entry: "avatar:" + a.ID, key: s.ks.Author(a.ID), version: a.Version})
		}
	case typeSite:
		var st siteItem
		if err = attributevalue.UnmarshalMap(av, &st); err == nil {
			for role, img := range map[string]*imageItem{"logo": st.Logo, "icon": st.Icon} {
				if id := img.libraryID(); id != "" {
					lib.want(id, use{entry: role + ":" + siteUser, key: s.ks.Site(), version: st.Version})
				}
			}
		}
	}
	return err
}

func (lib *library) want(mediaID string, u use) { lib.wanted[mediaID] = append(lib.wanted[mediaID], u) }

// addMissingUses adds to each item of lib the entries it needs and lacks,
// one transaction each: the entry, on the condition that the item is in
// the library, and a check that what names it has the version scanned.
// It returns how many it added, and stale when one of them changed since
// the scan (the caller scans again).
func (s *Store) addMissingUses(ctx context.Context, lib *library) (added int, stale bool, err error) {
	for _, id := range sortedKeys(lib.ids()) {
		have, in := lib.usedBy[id]
		if !in {
			// Not in the library (a tombstone, or a dangling id): the
			// post writes handle those.
			continue
		}
		for _, u := range lib.wanted[id] {
			if slices.Contains(have, u.entry) {
				continue
			}
			t := s.db.NewTxn()
			inLibrary := expression.Name("type").Equal(expression.Value(typeMedia))
			same := expression.Name("version").Equal(expression.Value(u.version))
			add := expression.Add(expression.Name("usedBy"), expression.Value(&types.AttributeValueMemberSS{Value: []string{u.entry}}))
			if err := firstErr(t.Check(u.key, same, errRaced), t.Update(s.ks.Media(id), add, &inLibrary, errRaced)); err != nil {
				return added, stale, err
			}
			switch err := s.db.Exec(ctx, t); {
			case errors.Is(err, errRaced), errors.Is(err, dynamo.ErrBusy):
				stale = true
			case err != nil:
				return added, stale, fmt.Errorf("recount media %s: %w", id, err)
			default:
				added++
			}
		}
	}
	return added, stale, nil
}

// ids returns the ids of the items some post, author or site names.
func (lib *library) ids() map[string]string {
	ids := make(map[string]string, len(lib.wanted))
	for id := range lib.wanted {
		ids[id] = id
	}
	return ids
}

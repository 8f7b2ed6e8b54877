package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage/internal/dynamo"
)

// Where media items are used: each media item keeps, in the string set
// usedBy, an entry for every post that shows it, "cover:<postId>" or
// "body:<postId>" (a body's `media:<id>`). The post write that starts or
// stops using an item adds or deletes its entry in the write's own
// transaction (one action per item whose use changes, none when a post
// names no library media): no request more, and an entry is added only
// under the condition that the item is in the library, so a concurrent
// deletion cannot leave a post showing an item that is gone. deleteMedia
// deletes an item only when usedBy is empty; with force it turns the item
// into a tombstone (typeMediaGone, out of the library) that keeps usedBy,
// so the posts that still name it can drop their entries later.

const typeMediaGone = "mediaGone"

// ErrMediaInUse means a media item to delete is used by posts (a
// *MediaInUseError tells which).
var ErrMediaInUse = errors.New("the media item is in use")

// MediaUse is one use of a media item: a post's cover or body, an
// author's avatar, or the site's logo or icon.
type MediaUse struct {
	// As is "cover", "body", "avatar", "logo" or "icon".
	As string
	// ID is the post's id for a cover or a body, the author's for an
	// avatar, and "site" for the logo and the icon.
	ID string
}

// MediaInUseError is a deletion refused because the item is in use.
type MediaInUseError struct{ Uses []MediaUse }

func (e *MediaInUseError) Error() string {
	return fmt.Sprintf("the media item is in use (%d uses as a cover, in a body, as an avatar, a logo or an icon): take it out of them, or delete it with force", len(e.Uses))
}

// Unwrap makes a MediaInUseError match ErrMediaInUse.
func (e *MediaInUseError) Unwrap() error { return ErrMediaInUse }

// usesOf returns the uses the entries of usedBy say, sorted.
func usesOf(usedBy []string) []MediaUse {
	slices.Sort(usedBy)
	uses := make([]MediaUse, 0, len(usedBy))
	for _, e := range usedBy {
		if as, id, ok := strings.Cut(e, ":"); ok {
			uses = append(uses, MediaUse{As: as, ID: id})
		}
	}
	return uses
}

// mediaRefs returns the usage entries of the post p (nil: none) by media
// id; with body, those of its body too.
func mediaRefs(p *postItem, body bool) map[string]string {
	refs := map[string]string{}
	if p == nil {
		return refs
	}
	if p.Cover != nil && p.Cover.Media != nil {
		refs["cover\x00"+p.Cover.Media.ID] = p.Cover.Media.ID
	}
	if body {
		// The ids its text only mentions (in code, say) are not shown:
		// an image shown has its renditions' URLs in the HTML.
		ids, _ := markdown.LibraryIDs(p.Body)
		for _, id := range ids {
			if strings.Contains(p.HTML, "/media/"+id+"/") {
				refs["body\x00"+id] = id
			}
		}
	}
	return refs
}

// mediaUsageActions adds to the post write t the changes of the usedBy
// entries from before to after (nil: created, deleted). A body's entries
// change only when both bodies were read (a write that leaves the body
// alone does not read it).
func (s *Store) mediaUsageActions(t *dynamo.Txn, before, after *postItem) error {
	body := (before == nil || !before.bodyUnread) && (after == nil || !after.bodyUnread)
	was, is := mediaRefs(before, body), mediaRefs(after, body)
	postID := ""
	if after != nil {
		postID = after.ID
	} else if before != nil {
		postID = before.ID
	}
	entry := func(ref string) types.AttributeValue {
		as, _, _ := strings.Cut(ref, "\x00")
		return &types.AttributeValueMemberSS{Value: []string{as + ":" + postID}}
	}
	for _, ref := range sortedKeys(is) {
		if _, ok := was[ref]; ok {
			continue
		}
		id := is[ref]
		field := "body"
		if strings.HasPrefix(ref, "cover\x00") {
			field = "coverMediaId"
		}
		inLibrary := expression.Name("type").Equal(expression.Value(typeMedia))
		gone := invalid(field, "the image media:%s is not in the media library", id)
		if err := t.Update(s.ks.Media(id), expression.Add(expression.Name("usedBy"), expression.Value(entry(ref))), &inLibrary, gone); err != nil {
			return err
		}
	}
	for _, ref := range sortedKeys(was) {
		if _, ok := is[ref]; ok {
			continue
		}
		// Without a condition: the item is in the library or a tombstone
		// (deleteMedia keeps one while it is used).
		if err := t.Update(s.ks.Media(was[ref]), expression.Delete(expression.Name("usedBy"), expression.Value(entry(ref))), nil, nil); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// deleteUsedMedia turns the media item m, in use, into a tombstone that
// keeps its usedBy, and takes its bytes from the library's counter, in one
// transaction.
func (s *Store) deleteUsedMedia(ctx context.Context, m *Media) error {
	t := s.db.NewTxn()
	upd := expression.Set(expression.Name("type"), expression.Value(typeMediaGone)).
		Remove(expression.Name("GSI1PK")).Remove(expression.Name("GSI1SK")).Remove(expression.Name("placeholder"))
	live := expression.Name("type").Equal(expression.Value(typeMedia)).And(expression.Name("byteSize").Equal(expression.Value(m.ByteSize)))
	if err := firstErr(t.Update(s.ks.Media(m.ID), upd, &live, fmt.Errorf("delete media %s: %w", m.ID, ErrNotFound)),
		s.countMedia(t, MediaQuota{}, -1, -m.ByteSize)); err != nil {
		return err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return fmt.Errorf("delete media %s: %w", m.ID, err)
	}
	return nil
}

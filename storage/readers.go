package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Readers: a signed-in reader's profile is kept from their token's
// claims, refreshed in the transaction of each comment they write, and
// their comments are counted in a rate item, also in that transaction, so
// that servers sharing the table enforce one rate limit and one
// duplicate window together.

// Reader limits.
const (
	// MaxCommentsPerMinute is the highest rate limit a reader can be
	// given (ReaderRules.PerMinute).
	MaxCommentsPerMinute = 1000
	// MaxReaderIDLength bounds a reader's id, their token's subject.
	MaxReaderIDLength = 255
	// DefaultReaderName is the name of a reader whose token never gave a
	// valid one.
	DefaultReaderName = "Reader"
	// RateWindow is the span a reader's comments are counted over, and
	// in which the same comment sent again is a duplicate.
	RateWindow = time.Minute
	// maxRecent bounds the entries a reader's rate item keeps when there
	// is no rate limit: enough to find duplicates of the last minute.
	maxRecent = 100
)

// readerKeyOf and rateKeyOf return the keys of a reader's items, or no
// key for no reader.
func readerKeyOf(p *ReaderProfile) key {
	if p == nil {
		return key{}
	}
	return keys.Reader(p.ID)
}

func rateKeyOf(ks keys.Space, p *ReaderProfile) key {
	if p == nil {
		return key{}
	}
	return ks.Rate(p.ID)
}

// refreshReader adds to t the write of the reader's stored profile when p
// changes it, or when there is none yet, on the condition that it is
// still as found (or still missing). With guard, an unchanged profile is
// checked in t as well: found is what the store remembered, not what it
// read. A picture is kept only where a post's links may point
// (checkLinkHosts): frontends fetch it as they fetch an author's avatar.
func (s *Store) refreshReader(t *dynamo.Txn, found map[key]item, p *ReaderProfile, now time.Time, guard bool) error {
	k := keys.Reader(p.ID)
	var stored readerItem
	err := dynamo.DecodeFound(found, k, &stored)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("decode reader %q: %w", p.ID, err)
	}
	next := stored
	cond := dynamo.CondNotExists()
	if exists {
		cond = condReader(&stored)
	} else {
		next = readerItem{PK: k.PK, SK: k.SK, Type: typeReader, ID: p.ID, Name: DefaultReaderName, CreatedAt: keys.Time(now)}
	}
	if name, ok := readerName(p.Name); ok {
		next.Name = name
	}
	if p.AvatarURL != "" && validateURL("avatarUrl", p.AvatarURL) == nil && s.checkLinkHosts([2]string{"avatarUrl", p.AvatarURL}) == nil {
		next.AvatarURL = p.AvatarURL
	}
	switch {
	case exists && next == stored && guard:
		return t.Check(k, cond, dynamo.ErrRetry)
	case exists && next == stored:
		return nil
	}
	next.UpdatedAt = keys.Time(now)
	return t.Put(next, &cond, dynamo.ErrRetry)
}

// condReader is the condition that a reader's stored profile is still
// stored.
func condReader(stored *readerItem) expression.ConditionBuilder {
	c := expression.Name("name").Equal(expression.Value(stored.Name))
	if stored.AvatarURL == "" {
		return c.And(expression.AttributeNotExists(expression.Name("avatarUrl")))
	}
	return c.And(expression.Name("avatarUrl").Equal(expression.Value(stored.AvatarURL)))
}

// countRate adds to t the write of the reader's rate item with the new
// comment counted, or refuses it: ErrDuplicateComment when the same text
// went to the same place within RateWindow, a *RateLimitError when
// in.Rules.PerMinute comments already did. The write is guarded by the
// item's version, so servers sharing the table count together.
func countRate(ks keys.Space, t *dynamo.Txn, found map[key]item, in NewComment, now time.Time) error {
	k := ks.Rate(in.Reader.ID)
	var rate rateItem
	err := dynamo.DecodeFound(found, k, &rate)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("decode rate of reader %q: %w", in.Reader.ID, err)
	}
	hash := commentHash(in.PostID, in.ParentID, in.Body)
	since := keys.Time(now.Add(-RateWindow))
	var recent []string
	for _, e := range rate.Recent {
		at, h, _ := strings.Cut(e, "#")
		if at <= since {
			continue
		}
		if h == hash {
			return ErrDuplicateComment
		}
		recent = append(recent, e)
	}
	if n := in.Rules.PerMinute; n > 0 && len(recent) >= n {
		at, _, _ := strings.Cut(recent[len(recent)-n], "#")
		wait := keys.ParseTime(at).Add(RateWindow).Sub(now)
		return &RateLimitError{RetryAfter: time.Duration(math.Ceil(wait.Seconds())) * time.Second}
	}
	recent = append(recent, keys.Time(now)+"#"+hash)
	if in.Rules.PerMinute == 0 && len(recent) > maxRecent {
		recent = recent[len(recent)-maxRecent:]
	}
	cond := dynamo.CondNotExists()
	if exists {
		cond = expression.Name("version").Equal(expression.Value(rate.Version))
	}
	return t.Put(rateItem{
		PK: k.PK, SK: k.SK, Type: typeRate, Recent: recent, Version: rate.Version + 1,
		ExpiresAt: now.Add(RateWindow).Unix() + 1,
	}, &cond, dynamo.ErrRetry)
}

// commentHash identifies a comment's place and text in a reader's rate
// item.
func commentHash(postID, parentID, body string) string {
	sum := sha256.Sum256([]byte(postID + "\n" + parentID + "\n" + body))
	return hex.EncodeToString(sum[:8])
}

func readerIDOf(p *ReaderProfile) string {
	if p == nil {
		return ""
	}
	return p.ID
}

// validateReaderID checks a reader's id, their token's subject: 1 to
// MaxReaderIDLength bytes of UTF-8 without control characters.
func validateReaderID(id string) error {
	if id == "" || len(id) > MaxReaderIDLength || !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
		return invalid("readerId", "must be 1 to %d bytes of UTF-8 without control characters", MaxReaderIDLength)
	}
	return nil
}

func (it *readerItem) reader() *Reader {
	return &Reader{
		ID: it.ID, Name: shownName(it.Name), AvatarURL: it.AvatarURL,
		CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt),
	}
}

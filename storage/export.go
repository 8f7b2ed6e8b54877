package storage

import (
	"context"
	"fmt"
	"io"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// ExportAccount writes to w, as one JSON document, everything the store
// holds about the account id: the account, the reader's profile, their
// sessions (without their secrets), by publication, their membership,
// comments (with their posts' titles) and reactions, and their staff
// roles (exportroles.go). It reads the reader's trail, and their roles,
// a page of 100 at a time and writes each page before reading the next,
// so its memory does not grow with the number of comments or roles. It returns ErrNotFound, before writing anything, when there
// is no such account, and ErrAccountClosed for a deleted one; an error
// after the first byte leaves the document cut short.
func (s *Store) ExportAccount(ctx context.Context, id string, w io.Writer) error {
	var acct accountItem
	if err := s.db.Get(ctx, keys.Account(id), true, &acct); err != nil {
		return fmt.Errorf("account %q: %w", id, err)
	}
	if acct.ClosedAt != "" {
		return ErrAccountClosed
	}
	var profile readerItem
	hasProfile := s.db.Get(ctx, keys.Reader(id), true, &profile) == nil
	sessions, err := s.Sessions(ctx, id)
	if err != nil {
		return err
	}
	x := &exportWriter{w: w, first: true}
	x.raw("{")
	x.field("exportedAt", keys.Time(s.Now()))
	x.field("account", map[string]any{"id": acct.ID, "email": acct.Email, "emailVerified": acct.EmailVerified,
		"createdAt": acct.CreatedAt, "signedInAt": acct.SignedInAt})
	if hasProfile {
		x.field("profile", map[string]any{"name": profile.Name, "avatarUrl": profile.AvatarURL,
			"createdAt": profile.CreatedAt, "updatedAt": profile.UpdatedAt})
	} else {
		x.field("profile", nil)
	}
	list := make([]map[string]any, 0, len(sessions))
	for _, ss := range sessions {
		list = append(list, map[string]any{"id": ss.ID, "createdAt": keys.Time(ss.CreatedAt),
			"lastUsedAt": keys.Time(ss.LastUsedAt), "userAgent": ss.UserAgent})
	}
	x.field("sessions", list)
	x.raw(`,"publications":[`)
	st := &exportState{x: x, firstPub: true}
	after := ""
	for {
		page, more, err := s.trailPageOf(ctx, id, after)
		if err != nil {
			return err
		}
		if err := s.exportPage(ctx, id, page, st); err != nil {
			return err
		}
		if !more || len(page) == 0 {
			break
		}
		after = page[len(page)-1].k.SK
	}
	st.closePub()
	x.raw("]")
	if err := s.exportRoles(ctx, id, x); err != nil {
		return err
	}
	x.raw("}\n")
	return x.err
}

// exportState is where the export's document is: in which publication,
// in which of its lists.
type exportState struct {
	x         *exportWriter
	pub, kind string
	firstPub  bool
	firstElem bool
}

func (st *exportState) closeKind() {
	if st.kind == keys.TrailComment || st.kind == keys.TrailReaction {
		st.x.raw("]")
	}
	st.kind = ""
}

func (st *exportState) closePub() {
	if st.pub != "" {
		st.closeKind()
		st.x.raw("}")
	}
	st.pub = ""
}

// enter moves the document to the list of kind in the publication pub.
func (st *exportState) enter(pub, kind string) {
	if pub != st.pub {
		st.closePub()
		if !st.firstPub {
			st.x.raw(",")
		}
		st.firstPub = false
		st.x.raw("{")
		st.x.value("publication")
		st.x.raw(":")
		st.x.value(pub)
		st.pub = pub
	}
	if kind != st.kind {
		st.closeKind()
		st.kind = kind
		switch kind {
		case keys.TrailComment:
			st.x.raw(`,"comments":[`)
		case keys.TrailReaction:
			st.x.raw(`,"reactions":[`)
		case keys.TrailMember:
			st.x.raw(`,"membership":`)
		}
		st.firstElem = true
	}
}

// exportPage writes the trail entries of one page: it reads what they
// name with one BatchGetItem per publication, and the titles of the
// comments' posts with another.
func (s *Store) exportPage(ctx context.Context, readerID string, page []trailEntry, st *exportState) error {
	for start := 0; start < len(page); {
		end := start
		for end < len(page) && page[end].pubID == page[start].pubID {
			end++
		}
		if err := s.exportPublication(ctx, readerID, page[start:end], st); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func (s *Store) exportPublication(ctx context.Context, readerID string, entries []trailEntry, st *exportState) error {
	ps, err := s.in(entries[0].pubID)
	if err != nil {
		return err
	}
	var ks []key
	for _, e := range entries {
		switch e.kind {
		case keys.TrailComment:
			if cid, err := keys.ParseCommentID(e.rest); err == nil {
				ks = append(ks, ps.ks.Comment(e.postID, cid), ps.ks.Held(e.postID, cid))
			}
		case keys.TrailReaction:
			ks = append(ks, ps.ks.Reaction(e.postID, e.rest, readerID))
		case keys.TrailMember:
			ks = append(ks, ps.ks.Member(readerID))
		}
	}
	found, err := ps.db.BatchGet(ctx, ks, true)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	titles, err := ps.postTitles(ctx, entries)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch e.kind {
		case keys.TrailComment:
			cid, err := keys.ParseCommentID(e.rest)
			if err != nil {
				continue
			}
			c, _, err := findComment(ps.ks, found, e.postID, cid)
			if err != nil || c.ReaderID != readerID {
				continue // deleted since, or not theirs
			}
			st.enter(e.pubID, e.kind)
			st.x.element(map[string]any{"postId": e.postID, "postTitle": titles[e.postID], "id": c.ID,
				"parentId": c.ParentID, "body": c.Body, "status": string(c.status()), "createdAt": c.CreatedAt,
				"editedAt": c.EditedAt}, &st.firstElem)
		case keys.TrailReaction:
			var r struct {
				Kinds []string `dynamodbav:"kinds,stringset"`
			}
			if dynamo.DecodeFound(found, ps.ks.Reaction(e.postID, e.rest, readerID), &r) != nil || len(r.Kinds) == 0 {
				continue
			}
			commentID := e.rest
			if commentID == keys.ReactionSubject("") {
				commentID = ""
			}
			st.enter(e.pubID, e.kind)
			st.x.element(map[string]any{"postId": e.postID, "commentId": commentID, "kinds": r.Kinds}, &st.firstElem)
		case keys.TrailMember:
			var m memberItem
			if dynamo.DecodeFound(found, ps.ks.Member(readerID), &m) != nil {
				continue
			}
			st.enter(e.pubID, e.kind)
			st.x.value(map[string]any{"tier": m.Tier, "email": m.Email, "emailVerified": m.EmailVerified,
				"newsletters": m.Newsletters, "createdAt": m.CreatedAt, "lastSeenAt": m.LastSeenAt})
		}
	}
	return nil
}

// postTitles returns the titles of the posts of the comment entries, by
// id, read with one BatchGetItem.
func (s *Store) postTitles(ctx context.Context, entries []trailEntry) (map[string]string, error) {
	var ks []key
	for _, e := range entries {
		if e.kind == keys.TrailComment {
			ks = append(ks, s.ks.Post(e.postID))
		}
	}
	titles := map[string]string{}
	if len(ks) == 0 {
		return titles, nil
	}
	found, err := s.db.BatchGet(ctx, ks, false)
	if err != nil {
		return nil, fmt.Errorf("export: posts: %w", err)
	}
	for _, e := range entries {
		var p postItem
		if e.kind == keys.TrailComment && dynamo.DecodeFound(found, s.ks.Post(e.postID), &p) == nil {
			titles[e.postID] = p.Title
		}
	}
	return titles, nil
}

package tests

import (
	"fmt"
	"slices"
	"time"

	"github.com/Khan/genqlient/graphql"

	graphpkg "github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// The mixed workload's model of the blog: what its clients know of the
// users, posts, comments and previews, as stale as a real client's
// knowledge, and the effects it expects writes to leave in the table.
// The test is in mixed_test.go, its driver in mixed_driver_test.go.

// mixUser is a signed-in user of the blog: an author, or an admin (who
// is an author too).
type mixUser struct {
	id, gid string
	admin   bool
	client  graphql.Client
}

// mixReader is a reader, whom any client may sign in as, through either
// server, with a token that carries a name and a picture, another name,
// or no claims at all: clients[server][claims].
type mixReader struct {
	sub     string
	clients [2][3]graphql.Client
}

// The two servers of the mix: one holds readers' comments, one
// publishes them.
const (
	holding    = 0
	publishing = 1
)

type mixPost struct {
	gid, owner, slug string
	version          int
	marker           string   // its body when created, which edits keep
	old              []string // slugs it had before, as far as the client knows
}

type mixComment struct {
	gid, post string     // global ids of the comment and post
	author    string     // the author who wrote it, or
	reader    *mixReader // the reader who did
	marker    string     // its body when written, which edits keep
	topLevel  bool
	held      bool // written as pending, and not approved since, as far as known
	rejected  bool // rejected, and not approved since, as far as known
}

// mixPreview is a preview link made during the run.
type mixPreview struct{ token, post string }

// mixSent is a reader's comment as it was sent, to send again.
type mixSent struct {
	client    graphql.Client
	reader    *mixReader
	in        AddCommentInput
	createdAt time.Time
}

// effect is what one logical write with a marker (a post's or a
// comment's body) is expected to leave in the table.
type effect struct {
	marker  string
	written bool            // a response said it was written
	gone    bool            // something may have removed it since
	again   map[string]bool // results of the same comment accepted again
}

// The client's view of the blog.

// tag names the client's current call, uniquely in the run.
func (c *mixClient) tag() string { return fmt.Sprintf("%d-%d", c.n, c.seq) }

// post returns a known post: mostly one of the client's own, else anyone's.
func (c *mixClient) post() *mixPost {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.posts) == 0 {
		return nil
	}
	if c.rng.IntN(10) < 7 {
		var own []*mixPost
		for _, p := range m.posts {
			if p.owner == c.user.id {
				own = append(own, p)
			}
		}
		if len(own) > 0 {
			return own[c.rng.IntN(len(own))].copy()
		}
	}
	return m.posts[c.rng.IntN(len(m.posts))].copy()
}

func (p *mixPost) copy() *mixPost {
	q := *p
	q.old = slices.Clone(p.old)
	return &q
}

// postRefusals are the codes a write to p by the client may get, the
// post's author or an admin aside: a draft or scheduled post of someone
// else is NOT_FOUND, a published one FORBIDDEN; any post may be gone.
func (c *mixClient) postRefusals(p *mixPost, more ...string) []string {
	out := append([]string{graphpkg.CodeNotFound}, more...)
	if !c.user.admin && p.owner != c.user.id {
		out = append(out, graphpkg.CodeForbidden)
	}
	return out
}

// setVersion records the version a post write returned, or that a
// CONFLICT said the post has.
func (m *mix) setVersion(gid string, version int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.posts {
		if p.gid == gid && version > p.version {
			p.version = version
		}
	}
}

// setPostSlug records the slug a post write returned, and the one it
// had before among its old ones.
func (m *mix) setPostSlug(gid, slug string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.posts {
		if p.gid == gid && p.slug != slug {
			p.old = lastOf(append(p.old, p.slug), 2*storage.MaxRedirects)
			p.slug = slug
		}
	}
}

// lastOf returns the last n of list.
func lastOf(list []string, n int) []string {
	return list[max(0, len(list)-n):]
}

// learn updates what the client knows from a refusal: a CONFLICT names
// the current version.
func (m *mix) learn(gid string, err error) {
	if v, ok := extension(err, "currentVersion").(float64); ok {
		m.setVersion(gid, int(v))
	}
}

func (c *mixClient) categories() []string {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for range c.rng.IntN(3) {
		if s := m.cats[c.rng.IntN(len(m.cats))]; !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// slugFlips: a slug another holds now may be free a moment later, when
// its holder moves on and keeps it only as a redirect.
var slugFlips = []string{"CONFLICT/SLUG_TAKEN"}

// postSlug returns a slug for a post write of the client's and whether
// another post may hold it now (SLUG_TAKEN): mostly a new one, else
// another post's old slug (a redirect the write takes from it), the
// post's own old one (self, when not nil) or another's current one.
func (c *mixClient) postSlug(self *mixPost) (string, bool) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	other := m.posts[c.rng.IntN(len(m.posts))]
	switch n := c.rng.IntN(20); {
	case n < 5 && len(other.old) > 0:
		return other.old[c.rng.IntN(len(other.old))], true
	case n < 7 && self != nil && len(self.old) > 0:
		return self.old[c.rng.IntN(len(self.old))], true
	case n < 9:
		return other.slug, self == nil || other.gid != self.gid
	}
	return "s-" + c.tag(), false
}

// authorSlug returns a slug for target as postSlug does for posts.
func (c *mixClient) authorSlug(target *mixUser) (string, bool) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	other := m.users[c.rng.IntN(len(m.users))]
	switch n := c.rng.IntN(10); {
	case n < 4 && len(m.authorOld[other.id]) > 0:
		old := m.authorOld[other.id]
		return old[c.rng.IntN(len(old))], true
	case n < 5:
		return m.authorSlug[other.id], other != target
	}
	return "w-" + c.tag(), false
}

// setAuthorSlug records the slug an author write returned.
func (m *mix) setAuthorSlug(id, slug string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.authorSlug[id]; cur != slug {
		m.authorOld[id] = lastOf(append(m.authorOld[id], cur), 2*storage.MaxRedirects)
		m.authorSlug[id] = slug
	}
}

// expect adds the marker of a write whose effect is counted.
func (m *mix) expect(marker string) *effect {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &effect{marker: marker}
	m.effects[marker] = e
	return e
}

// written returns the done function of a write of e.
func (m *mix) written(e *effect) func(string, bool) {
	return func(_ string, ok bool) {
		m.mu.Lock()
		e.written = e.written || ok
		m.mu.Unlock()
	}
}

// user returns the user with the author id.
func (m *mix) user(id string) *mixUser {
	for _, u := range m.users {
		if u.id == id {
			return u
		}
	}
	return nil
}

// owner returns the author of the post gid, as far as known.
func (m *mix) owner(gid string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.posts {
		if p.gid == gid {
			return p.owner
		}
	}
	return ""
}

// comment returns a known comment, a held one first when held, or nil.
func (c *mixClient) comment(held bool) *mixComment {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if held {
		var list []*mixComment
		for _, cm := range m.comments {
			if cm.held {
				list = append(list, cm)
			}
		}
		if len(list) > 0 {
			cm := *list[c.rng.IntN(len(list))]
			return &cm
		}
	}
	if len(m.comments) == 0 {
		return nil
	}
	cm := *m.comments[c.rng.IntN(len(m.comments))]
	return &cm
}

// topComment returns a known top-level comment to reply to, or nil.
func (c *mixClient) topComment() *mixComment {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var tops []*mixComment
	for _, cm := range m.comments {
		if cm.topLevel {
			tops = append(tops, cm)
		}
	}
	if len(tops) == 0 {
		return nil
	}
	cm := *tops[c.rng.IntN(len(tops))]
	return &cm
}

// addComment records a comment a response returned.
func (m *mix) addComment(cm *mixComment) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.ContainsFunc(m.comments, func(k *mixComment) bool { return k.gid == cm.gid }) {
		m.comments = append(m.comments, cm)
	}
}

// published records that the comment gid is published.
func (m *mix) published(gid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, cm := range m.comments {
		if cm.gid == gid {
			cm.held, cm.rejected = false, false
		}
	}
}

// rejected records that the comment gid is rejected.
func (m *mix) rejected(gid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, cm := range m.comments {
		if cm.gid == gid {
			cm.rejected = true
		}
	}
}

// rejectedComment returns a comment known to be rejected, or nil.
func (c *mixClient) rejectedComment() *mixComment {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var list []*mixComment
	for _, cm := range m.comments {
		if cm.rejected {
			list = append(list, cm)
		}
	}
	if len(list) == 0 {
		return nil
	}
	cm := *list[c.rng.IntN(len(list))]
	return &cm
}

// writerClient returns a client that signs in as the writer of cm, on
// either server, or nil when the writer is unknown.
func (c *mixClient) writerClient(cm *mixComment) graphql.Client {
	if cm.reader != nil {
		return cm.reader.clients[c.rng.IntN(2)][c.rng.IntN(3)]
	}
	if u := c.m.user(cm.author); u != nil {
		return u.client
	}
	return nil
}

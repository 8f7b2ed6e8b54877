package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/keys"
)

// The checks of the registry of Check (check.go), one function each.

// checkItems reports what the scan found wrong of single items.
func checkItems(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	report(badf, t.found)
}

// checkPosts checks every post's keys, names and rendered body, and
// that it has exactly the copies it must have, as they must be.
func checkPosts(ctx context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	// Posts: keys, names, and the copies they must have.
	want := map[key]postItem{}
	for id, p := range t.posts {
		if w := p.withPostKeys(s.ks); w.PK != p.PK || w.SK != p.SK || w.GSI1PK != p.GSI1PK || w.GSI1SK != p.GSI1SK {
			badf("post %s has wrong keys or GSI1 entry", id)
		}
		a := t.authors[p.AuthorID]
		switch {
		case a == nil:
			badf("post %s has unknown author %s", id, p.AuthorID)
		case p.AuthorName != a.Name || p.AuthorSlug != a.Slug || p.AuthorVer != a.NameVer:
			badf("post %s carries author %q/%s (v%d), author has %q/%s (v%d)", id, p.AuthorName, p.AuthorSlug, p.AuthorVer, a.Name, a.Slug, a.NameVer)
		}
		// A post rendered by another renderer (another version, or none:
		// written before versions) waits for the background re-render
		// (rerender.go); what it holds is checked once that has run. One
		// never rendered is wrong whatever the renderer.
		// Once the store's renderer is the table's and its sweep is done,
		// every body it can render has its version.
		derived := postItem{Body: p.Body}
		if p.RenderVersion == s.render.Version() || p.HTML == "" {
			if err := s.deriveBody(ctx, &derived, false); err != nil || !reflect.DeepEqual(normal(derived.withDerivedOnly()), normal(p.withDerivedOnly())) {
				badf("post %s has a rendered body, table of contents, word count or excerpt that its body does not give", id)
			}
		} else if t.renderer != nil && t.renderer.Done && t.renderer.Version == s.render.Version() && s.deriveBody(ctx, &derived, false) == nil {
			badf("post %s is rendered by %q, not by the table's renderer %q, whose sweep is done", id, p.RenderVersion, t.renderer.Version)
		}
		for _, c := range p.Cats {
			cat := t.cats[c.Slug]
			switch {
			case cat == nil:
				badf("post %s has unknown category %s", id, c.Slug)
			case p.published() && (c.Name != cat.Name || p.CatVer[c.Slug] != cat.NameVer):
				badf("post %s carries category name %q, category %s has %q", id, c.Name, c.Slug, cat.Name)
			}
		}
		checkCoAuthorsAndTags(p, t.authors, t.tags, badf)
		if !p.published() {
			continue
		}
		for _, authorID := range p.authorIDs() {
			ac := p.authorCopyOf(s.ks, authorID)
			want[key{PK: ac.PK, SK: ac.SK}] = ac
		}
		for _, c := range p.Cats {
			cc := p.categoryCopy(s.ks, c.Slug)
			want[key{PK: cc.PK, SK: cc.SK}] = cc
		}
		for _, tg := range p.Tags {
			tc := p.tagCopy(s.ks, tg.Slug)
			want[key{PK: tc.PK, SK: tc.SK}] = tc
		}
		if p.Featured {
			fc := p.featuredCopy(s.ks)
			want[key{PK: fc.PK, SK: fc.SK}] = fc
		}
		if p.Locale != "" {
			lc := p.localeCopy(s.ks)
			want[key{PK: lc.PK, SK: lc.SK}] = lc
		}
		for _, lc := range p.localeListCopies(s.ks) {
			want[key{PK: lc.PK, SK: lc.SK}] = lc
		}
	}
	// A copy whose comment count alone differs may lag (doccounts.go):
	// it is read again after the allowed lag.
	for _, c := range t.copies {
		k := key{PK: c.PK, SK: c.SK}
		t.copiesOf[c.ID] = append(t.copiesOf[c.ID], k)
		w, ok := want[k]
		counted := *c
		counted.CommentCount = w.CommentCount
		switch {
		case !ok:
			badf("orphan copy %s/%s of post %s", c.PK, c.SK, c.ID)
		case !reflect.DeepEqual(normal(w), normal(*c)) && reflect.DeepEqual(normal(w), normal(counted)):
			t.lagging[c.ID] = append(t.lagging[c.ID], k)
		case !reflect.DeepEqual(normal(w), normal(*c)):
			badf("copy %s/%s disagrees with post %s: %s", c.PK, c.SK, c.ID, differences(*c, w))
		}
		delete(want, k)
	}
	for k, w := range want {
		badf("post %s lacks its copy %s/%s", w.ID, k.PK, k.SK)
	}
}

// checkAllSlugs checks that there is a reservation for each slug a post,
// a page or an author holds, the current one as current, the others as
// redirects, and no other; and each page with its rendered body.
func checkAllSlugs(ctx context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	// Slugs: a reservation for each slug a post or an author holds, the
	// current one as current, the others as redirects, and no other.
	postHolders := map[string]holder{}
	for id, p := range t.posts {
		postHolders[id] = holder{p.Slug, p.Slugs}
	}
	authorHolders := map[string]holder{}
	for id, a := range t.authors {
		authorHolders[id] = holder{a.Slug, a.Slugs}
		if a.Slug == "" {
			badf("author %s has no slug", id)
		}
	}
	var postRes, authorRes []heldSlug
	// Pages share the posts' namespace: one map of holders, pages' ids
	// marked, so a slug held by a post and a page is reported.
	for id, pg := range t.sitePgs {
		postHolders["page:"+id] = holder{pg.Slug, pg.Slugs}
		report(badf, checkPage(s.ks, pg))
		// As a post's: checked when of the store's renderer, reported
		// when left to another once the table's sweep is done.
		var derived pageItem
		if pg.RenderVersion == s.render.Version() || (pg.HTML == "" && pg.Body != "") {
			if err := s.setPageBody(ctx, &derived, pg.Body, false); err != nil || !reflect.DeepEqual(derived.withDerivedOnly(), pg.withDerivedOnly()) {
				badf("page %s has a rendered body, table of contents, word count or excerpt that its body does not give", id)
			}
		} else if t.renderer != nil && t.renderer.Done && t.renderer.Version == s.render.Version() && s.setPageBody(ctx, &derived, pg.Body, false) == nil {
			badf("page %s is rendered by %q, not by the table's renderer %q, whose sweep is done", id, pg.RenderVersion, t.renderer.Version)
		}
	}
	for _, sl := range t.slugs {
		owner := sl.PostID
		if sl.PageID != "" {
			owner = "page:" + sl.PageID
		}
		if (sl.PostID == "") == (sl.PageID == "") {
			badf("slug reservation %q names %q as post and %q as page", sl.PK, sl.PostID, sl.PageID)
		}
		pk, _ := s.ks.Local(sl.PK)
		postRes = append(postRes, heldSlug{strings.TrimPrefix(pk, keys.PrefixSlug), owner, sl.Redirect, pk == sl.SK})
	}
	for _, sl := range t.aslugs {
		pk, _ := s.ks.Local(sl.PK)
		authorRes = append(authorRes, heldSlug{strings.TrimPrefix(pk, keys.PrefixAuthorSlug), sl.AuthorID, sl.Redirect, pk == sl.SK})
	}
	checkSlugs("post", postHolders, postRes, badf)
	checkSlugs("author", authorHolders, authorRes, badf)
}

// checkAllComments checks where each comment lives, who wrote it, and
// the replies each top-level comment carries.
func checkAllComments(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	// Comments: where each lives, who wrote it, counts per post and per
	// thread, the replies each top-level comment carries.
	report(badf, checkComments(s.ks, t.comments, t.queued, t.posts, t.authors, t.readers))
}

// checkCommentCounts checks the comment and thread counts of every post.
func checkCommentCounts(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	visible := map[string]int64{}
	threads := map[string]int64{}
	for _, c := range t.comments {
		if c.status() != CommentPublished {
			continue
		}
		if !c.Deleted {
			visible[c.PostID]++
		}
		if c.ParentID == "" {
			threads[c.PostID]++
		}
	}
	for id, p := range t.posts {
		// The count item's counts are exact; the post item's and its
		// copies' follow them from the change feed.
		c := p.counts
		if c != nil && (c.CommentCount != visible[id] || c.ThreadCount != threads[id]) {
			badf("post %s counts %d comments in %d threads, has %d in %d", id, c.CommentCount, c.ThreadCount, visible[id], threads[id])
		}
		if c != nil && (p.CommentCount != c.CommentCount || p.ThreadCount != c.ThreadCount) {
			// The post item lags, and its copies with it: all are read
			// again after the allowed lag.
			t.lagging[id] = t.copiesOf[id]
		}
	}
}

// checkReaders checks every reader's keys, name and picture, and every
// rate item.
func checkReaders(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	for id, r := range t.readers {
		if r.PK != keys.Reader(id).PK || r.SK != keys.Reader(id).SK || validateReaderID(id) != nil {
			badf("reader %q has wrong keys", id)
		}
		if name, ok := readerName(r.Name); !ok || name != r.Name || (r.AvatarURL != "" && validateURL("avatarUrl", r.AvatarURL) != nil) {
			badf("reader %q has name %q and picture %q", id, r.Name, r.AvatarURL)
		}
	}
	for _, r := range t.rates {
		report(badf, checkRate(s.ks, r))
	}
}

// checkCounters checks the post counts of authors, categories, tags and
// STATS, and their counts by month.
func checkCounters(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	// Counters, and their counts by month.
	authorPosts := map[string]int64{}
	catPosts := map[string]int64{}
	tagPosts := map[string]int64{}
	var published int64
	for _, p := range t.posts {
		if !p.published() {
			continue
		}
		published++
		for _, authorID := range p.authorIDs() {
			authorPosts[authorID]++
		}
		for _, c := range p.Cats {
			catPosts[c.Slug]++
		}
		for _, tg := range p.Tags {
			tagPosts[tg.Slug]++
		}
	}
	byMonth := map[key]months{}
	for _, p := range t.posts {
		if !p.published() {
			continue
		}
		month := p.PublishedAt[:len("2006-01")]
		for _, k := range p.counterKeys(s.ks) {
			if byMonth[k] == nil {
				byMonth[k] = months{}
			}
			byMonth[k][month]++
		}
	}
	counted := map[key]months{s.ks.Stats(): t.stats.Months}
	for id, a := range t.authors {
		counted[s.ks.Author(id)] = a.Months
		if a.PostCount != authorPosts[id] {
			badf("author %s counts %d posts, has %d", id, a.PostCount, authorPosts[id])
		}
	}
	for slug, c := range t.cats {
		counted[s.ks.Category(slug)] = c.Months
		if c.PostCount != catPosts[slug] {
			badf("category %s counts %d posts, has %d", slug, c.PostCount, catPosts[slug])
		}
	}
	for slug, tg := range t.tags {
		if k := s.ks.Tag(slug); tg.PK != k.PK || tg.SK != k.SK || (tg.MergedInto == "") != (tg.GSI1PK == s.ks.Partition(keys.TagsPartition) && tg.GSI1SK == k.SK) {
			badf("tag %s has wrong keys or GSI1 entry", slug)
		}
		counted[s.ks.Tag(slug)] = tg.Months
		if tg.PostCount != tagPosts[slug] {
			badf("tag %s counts %d posts, has %d", slug, tg.PostCount, tagPosts[slug])
		}
	}
	for k, got := range counted {
		for _, month := range slices.Sorted(maps.Keys(got)) {
			if got[month] != byMonth[k][month] {
				badf("%s counts %d posts in %s, has %d", k.PK, got[month], month, byMonth[k][month])
			}
		}
		for month, n := range byMonth[k] {
			if _, ok := got[month]; !ok {
				badf("%s counts no posts in %s, has %d", k.PK, month, n)
			}
		}
	}
	if t.stats.PostCount != published || t.stats.AuthorCount != int64(len(t.authors)) || t.stats.CategoryCount != int64(len(t.cats)) {
		badf("stats count %d posts, %d authors, %d categories; table has %d, %d, %d",
			t.stats.PostCount, t.stats.AuthorCount, t.stats.CategoryCount, published, len(t.authors), len(t.cats))
	}
	var publishedPages int64
	for _, pg := range t.sitePgs {
		publishedPages += b2i(pg.Status == string(StatusPublished))
	}
	if t.stats.PageCount != publishedPages {
		badf("stats count %d published pages; table has %d", t.stats.PageCount, publishedPages)
	}
}

// checkScheduledEntries checks the entries of scheduled posts that every
// counter keeps.
func checkScheduledEntries(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	// Scheduled-post entries: every post whose time has not come is in the
	// entries of each item that counts it, with its publishedAt; an entry
	// still in the future names such a post. Entries whose time has passed
	// count nothing and may linger until a write removes them.
	now := s.nowKey()
	waiting := map[key]schedule{}
	for id, p := range t.posts {
		if !p.published() || p.PublishedAt <= now {
			continue
		}
		for _, k := range p.counterKeys(s.ks) {
			if waiting[k] == nil {
				waiting[k] = schedule{}
			}
			waiting[k][id] = p.PublishedAt
		}
	}
	recorded := map[key]schedule{s.ks.Stats(): t.stats.Scheduled}
	for id, a := range t.authors {
		recorded[s.ks.Author(id)] = a.Scheduled
	}
	for slug, c := range t.cats {
		recorded[s.ks.Category(slug)] = c.Scheduled
	}
	for slug, tg := range t.tags {
		recorded[s.ks.Tag(slug)] = tg.Scheduled
	}
	for k, entries := range recorded {
		for id, at := range entries {
			if at > now && waiting[k][id] != at {
				badf("%s records post %s as scheduled at %s; it is not", k.PK, id, at)
			}
		}
		for id, at := range waiting[k] {
			if entries[id] != at {
				badf("%s lacks the entry of post %s, scheduled at %s", k.PK, id, at)
			}
		}
	}
}

// differences returns the attributes in which the copy c differs from
// want, what the post says it must be, as "name: copy value, post value",
// in name order. It names no memory address, so that the same difference
// read twice reads the same (Check confirms a finding by its text).
func differences(c, want postItem) string {
	got, errA := attributevalue.MarshalMap(normal(c))
	wanted, errB := attributevalue.MarshalMap(normal(want))
	if err := errors.Join(errA, errB); err != nil {
		return err.Error()
	}
	names := map[string]bool{}
	for name := range got {
		names[name] = true
	}
	for name := range wanted {
		names[name] = true
	}
	var diffs []string
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if !reflect.DeepEqual(got[name], wanted[name]) {
			diffs = append(diffs, fmt.Sprintf("%s: copy %s, post %s", name, showValue(got[name]), showValue(wanted[name])))
		}
	}
	return strings.Join(diffs, "; ")
}

// showValue returns av as JSON, or "none" for a missing attribute.
func showValue(av types.AttributeValue) string {
	if av == nil {
		return "none"
	}
	var v any
	if err := attributevalue.Unmarshal(av, &v); err != nil {
		return err.Error()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// normal makes empty and missing collections compare equal.
func normal(p postItem) postItem {
	if len(p.Cats) == 0 {
		p.Cats = nil
	}
	if len(p.CatVer) == 0 {
		p.CatVer = nil
	}
	if len(p.TOC) == 0 {
		p.TOC = nil
	}
	if len(p.CoAuthors) == 0 {
		p.CoAuthors, p.CoAuthorVer = nil, nil
	}
	if len(p.Tags) == 0 {
		p.Tags, p.TagVer = nil, nil
	}
	return p
}

// withDerivedOnly returns what setBody derives from the page's body, with
// an empty table of contents as none.
func (it pageItem) withDerivedOnly() pageItem {
	d := pageItem{HTML: it.HTML, TOC: it.TOC, Words: it.Words, AutoExcerpt: it.AutoExcerpt}
	if len(d.TOC) == 0 {
		d.TOC = nil
	}
	return d
}

// withDerivedOnly returns what derive derives from the post's body.
func (it postItem) withDerivedOnly() postItem {
	return postItem{HTML: it.HTML, TOC: it.TOC, Words: it.Words, Minutes: it.Minutes, AutoExcerpt: it.AutoExcerpt}
}

// holder is a post or an author as far as its slugs go.
type holder struct {
	slug  string
	slugs []string
}

// heldSlug is a slug reservation as found.
type heldSlug struct {
	slug, owner string
	redirect    bool
	keyed       bool // PK and SK agree
}

// checkSlugs compares the reservations of one kind of slug with the
// slugs their holders hold.
func checkSlugs(kind string, holders map[string]holder, found []heldSlug, badf func(string, ...any)) {
	want := map[string]heldSlug{}
	for id, h := range holders {
		slugs := holderSlugs(h.slugs, h.slug)
		switch {
		case len(h.slugs) > 0 && h.slugs[0] != h.slug:
			badf("%s %s has slug %q but slugs %v", kind, id, h.slug, h.slugs)
		case len(slugs) > 1+MaxRedirects:
			badf("%s %s keeps %d redirects", kind, id, len(slugs)-1)
		}
		for i, sl := range slugs {
			if other, dup := want[sl]; dup {
				badf("%s slug %q is held by %s and %s", kind, sl, other.owner, id)
			}
			want[sl] = heldSlug{slug: sl, owner: id, redirect: i > 0, keyed: true}
		}
	}
	for _, f := range found {
		w, ok := want[f.slug]
		switch {
		case !ok:
			badf("%s slug reservation %q points at %q, which does not hold it", kind, f.slug, f.owner)
		case f != w:
			badf("%s slug reservation %q is %+v, its holder has %+v", kind, f.slug, f, w)
		}
		delete(want, f.slug)
	}
	for _, w := range want {
		badf("%s %s has no reservation of its slug %q", kind, w.owner, w.slug)
	}
}

// checkComments returns what is wrong with the comments and the admins'
// queue entries: keys that do not match the status, a writer that is not
// one, a pending comment missing from a queue or an entry for none, a
// reply count or carried replies that disagree with the replies.
func checkComments(ks keys.Space, comments, queued []*commentItem, posts map[string]*postItem, authors map[string]*authorItem, readers map[string]*readerItem) []string {
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	entries := map[key]*commentItem{}
	for _, q := range queued {
		entries[key{PK: q.PK, SK: q.SK}] = q
	}
	published := map[string]*commentItem{} // by post/id
	replies := map[string][]*commentItem{} // published replies by post/parent, in key order
	for _, c := range comments {
		cid, err := parseCommentID(c.ID)
		if err != nil {
			badf("comment %s/%s has a malformed id", c.PK, c.SK)
			continue
		}
		post := posts[c.PostID]
		if post == nil {
			badf("orphan comment %s of missing post %s", c.ID, c.PostID)
		}
		switch {
		case (c.AuthorID == "") == (c.ReaderID == ""):
			badf("comment %s has author %q and reader %q, want exactly one", c.ID, c.AuthorID, c.ReaderID)
		case c.AuthorID != "" && authors[c.AuthorID] == nil:
			badf("comment %s has unknown author %s", c.ID, c.AuthorID)
		case c.ReaderID != "" && readers[c.ReaderID] == nil:
			badf("comment %s has unknown reader %q", c.ID, c.ReaderID)
		}
		if (cid.Parent == nil) != (c.ParentID == "") || (cid.Parent != nil && cid.Parent.String() != c.ParentID) {
			badf("comment %s has parent %q", c.ID, c.ParentID)
		}
		switch c.status() {
		case CommentPublished:
			if k := ks.Comment(c.PostID, cid); c.PK != k.PK || c.SK != k.SK || c.GSI1PK != "" || c.ExpiresAt != 0 {
				badf("published comment %s has wrong keys", c.ID)
			}
			published[c.PostID+"/"+c.ID] = c
			if c.ParentID != "" {
				replies[c.PostID+"/"+c.ParentID] = append(replies[c.PostID+"/"+c.ParentID], c)
			}
		case CommentPending:
			k, entry := ks.Held(c.PostID, cid), ks.QueueEntry(c.PostID, cid)
			if c.PK != k.PK || c.SK != k.SK || c.GSI1SK != keys.QueueSort(c.PostID, cid) ||
				(post != nil && c.GSI1PK != ks.AuthorQueue(post.AuthorID)) {
				badf("pending comment %s has wrong keys or queue entry", c.ID)
			}
			switch q := entries[entry]; {
			case q == nil:
				badf("pending comment %s is not in the admins' queue", c.ID)
			case !reflect.DeepEqual(q.queueCopy(ks, cid), c.queueCopy(ks, cid)):
				badf("the admins' queue entry of comment %s disagrees with it", c.ID)
			}
			delete(entries, entry)
		case CommentRejected:
			if k := ks.Held(c.PostID, cid); c.PK != k.PK || c.SK != k.SK || c.GSI1PK != "" || c.ExpiresAt == 0 {
				badf("rejected comment %s has wrong keys or no expiry", c.ID)
			}
		default:
			badf("comment %s has status %q", c.ID, c.Status)
		}
		if c.status() != CommentPublished && (c.Deleted || c.ReplyCount != 0 || len(c.Replies) > 0) {
			badf("held comment %s has replies or is a tombstone", c.ID)
		}
	}
	for k, q := range entries {
		badf("queue entry %s/%s names comment %s, which is not pending", k.PK, k.SK, q.ID)
	}
	for _, c := range published {
		if c.ParentID != "" {
			if p := published[c.PostID+"/"+c.ParentID]; p == nil {
				badf("reply %s answers comment %s, which is not published", c.ID, c.ParentID)
			}
			continue
		}
		rs := replies[c.PostID+"/"+c.ID]
		slices.SortFunc(rs, func(a, b *commentItem) int { return strings.Compare(a.SK, b.SK) })
		if c.ReplyCount != int64(len(rs)) {
			badf("comment %s counts %d replies, has %d", c.ID, c.ReplyCount, len(rs))
		}
		if c.Deleted && c.ReplyCount == 0 {
			badf("tombstone %s has no replies", c.ID)
		}
		var want []replyCopy
		for _, r := range rs[:min(len(rs), MaxReplyPage)] {
			want = append(want, r.replyCopy())
		}
		if c.Version == 0 && len(c.Replies) == 0 {
			continue // written before comments carried their replies
		}
		if !slices.Equal(c.Replies, want) {
			badf("comment %s carries replies %+v, its first replies are %+v", c.ID, c.Replies, want)
		}
	}
	return bad
}

// checkRate returns what is wrong with a reader's rate item: entries out
// of order or malformed, too many, or an expiry before the last one's
// minute is over.
func checkRate(ks keys.Space, r *rateItem) []string {
	var bad []string
	if pk, _ := ks.Local(r.PK); !strings.HasPrefix(pk, keys.PrefixRate+keys.PrefixReader) || pk != r.SK || r.Version < 1 {
		bad = append(bad, fmt.Sprintf("rate item %s/%s has wrong keys or version", r.PK, r.SK))
	}
	if len(r.Recent) == 0 || len(r.Recent) > max(maxRecent, MaxCommentsPerMinute) {
		return append(bad, fmt.Sprintf("rate item %s has %d entries", r.PK, len(r.Recent)))
	}
	prev := ""
	for _, e := range r.Recent {
		at, hash, ok := strings.Cut(e, "#")
		if !ok || keys.ParseTime(at).IsZero() || len(hash) != 16 || at < prev {
			bad = append(bad, fmt.Sprintf("rate item %s has a malformed or misplaced entry %q", r.PK, e))
		}
		prev = at
	}
	at, _, _ := strings.Cut(r.Recent[len(r.Recent)-1], "#")
	if r.ExpiresAt < keys.ParseTime(at).Add(RateWindow).Unix() {
		bad = append(bad, fmt.Sprintf("rate item %s expires before its last entry's minute is over", r.PK))
	}
	return bad
}

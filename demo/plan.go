package demo

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blogql/blog/storage"
)

// Fixed seed of the content generator: the demo blog is the same on every
// run and every machine; only its dates follow the clock.
const seed1, seed2 = 2024, 42

// Shape of the demo blog.
const (
	draftCount = 4
	// commentedPosts is how many of the newest published posts get
	// comment threads.
	commentedPosts = 15
	// featuredCount is how many posts are featured: the newest published
	// posts with a cover.
	featuredCount = 3
	// maxCoAuthors is how many co-authors a co-written post has at most.
	maxCoAuthors = 2
	// history is how far back the oldest post was published.
	history = 540 * 24 * time.Hour
	// Body sizes in bytes. Sections are added until the target is reached,
	// so a body ends up at most one section (< 1 KB) longer.
	minBodyTarget = 1000
	maxBodyTarget = 5800
)

// scheduleDays are the days from now on which the scheduled posts appear,
// at 09:00 UTC.
var scheduleDays = []int{2, 6, 13}

var scheduledCount = len(scheduleDays)

type postState int

const (
	stateDraft postState = iota
	statePublished
	stateScheduled
)

// plannedPost is one post of the demo blog and what happens to it.
type plannedPost struct {
	storage.NewPost
	state    postState
	at       time.Time // publish time for published and scheduled posts
	threads  []plannedThread
	featured bool
}

// plannedThread is a top-level comment and its replies.
type plannedThread struct {
	plannedComment
	replies []plannedComment
}

// plannedComment is written by the author authorID, or by the demo
// Reader when reader is set; held comments wait for moderation.
type plannedComment struct {
	authorID, body string
	reader, held   bool
}

// plan is the whole demo blog, decided before anything is written.
type plan struct {
	authors    []storage.NewAuthor
	categories []storage.NewCategory
	posts      []plannedPost // oldest publish time first; drafts among them
	series     storage.NewSeries
	inSeries   []string // the slugs of the series' posts, in its order
}

// newPlan builds the demo blog. Everything but the dates is the same for
// every now: the random source is consumed in the same order whatever the
// time, and dates are offsets from now.
func newPlan(now time.Time) *plan {
	rng := rand.New(rand.NewPCG(seed1, seed2))
	p := &plan{categories: categories}
	for _, a := range authors {
		p.authors = append(p.authors, a.NewAuthor)
	}

	order := rng.Perm(len(topics))
	n := len(order)
	// The last scheduledCount posts are scheduled; drafts are spread over
	// the rest, so a draft can be an old idea or a recent one.
	state := make([]postState, n)
	for i := range state {
		state[i] = statePublished
	}
	for i := n - scheduledCount; i < n; i++ {
		state[i] = stateScheduled
	}
	for drafts := 0; drafts < draftCount; {
		if i := rng.IntN(n - scheduledCount); state[i] == statePublished {
			state[i] = stateDraft
			drafts++
		}
	}

	base := now.UTC().Truncate(time.Minute)
	published := n - scheduledCount - draftCount
	step := history / time.Duration(published)
	k, s := 0, 0
	written := map[string]int{}
	for i, ti := range order {
		t := topics[ti]
		pp := plannedPost{NewPost: storage.NewPost{
			AuthorID:   pickAuthor(rng, t, written),
			Title:      t.title,
			Slug:       slugify(t.title),
			Excerpt:    fill(pick(rng, excerpts), t),
			Body:       body(rng, t),
			Categories: t.cats,
			Tags:       t.tags,
		}, state: state[i]}
		if ti%3 == 0 {
			// Every third topic has a cover; the rest show how a post
			// without one looks.
			pp.CoverImage = &storage.Image{
				URL: "https://example.com/covers/" + pp.Slug + ".jpg", Alt: "Illustration for " + t.title,
				Width: 1200, Height: 630,
			}
		}
		// Draw the jitter for every post, so that which posts are drafts
		// does not shift the dates of the others.
		jitter := time.Duration(rng.Int64N(int64(step / 2))).Truncate(time.Minute)
		switch pp.state {
		case statePublished:
			// Evenly spread over the history, newest between one hour and
			// half a step ago.
			pp.at = base.Add(-history + time.Duration(k+1)*step - jitter - time.Hour).Truncate(time.Minute)
			k++
		case stateScheduled:
			pp.at = base.Truncate(24*time.Hour).AddDate(0, 0, scheduleDays[s]).Add(9 * time.Hour)
			s++
		}
		p.posts = append(p.posts, pp)
	}

	// Threads on the newest published posts, newest post first. The
	// newest also has the reader's comments, one of them pending; they
	// draw nothing from rng, so the rest of the blog is as it was.
	c := 0
	for i := len(p.posts) - 1; i >= 0 && c < commentedPosts; i-- {
		if p.posts[i].state == statePublished {
			p.posts[i].threads = threads(rng, p.posts[i], topics[order[i]])
			if c == 0 {
				p.posts[i].threads = append(p.posts[i].threads, readerThreads(p.posts[i], topics[order[i]])...)
			}
			c++
		}
	}

	// Co-authors, featured posts and the series draw nothing from rng
	// either: they follow from what is planned above.
	for i := range p.posts {
		if slices.Contains(coWritten, p.posts[i].Title) {
			p.posts[i].CoAuthors = coAuthors(p.posts[i], topics[order[i]])
		}
	}
	for i, f := len(p.posts)-1, 0; i >= 0 && f < featuredCount; i-- {
		if p.posts[i].state == statePublished && p.posts[i].CoverImage != nil {
			p.posts[i].featured = true
			f++
		}
	}
	p.series = demoSeries.NewSeries
	for _, title := range demoSeries.posts {
		p.inSeries = append(p.inSeries, slugify(title))
	}
	return p
}

// coAuthors picks the co-authors of the post pp about t: the other
// authors who write about its categories, in the order of authors, but
// none who starts a comment thread on it; at most maxCoAuthors.
func coAuthors(pp plannedPost, t topic) []string {
	var out []string
	for _, a := range authors {
		switch {
		case len(out) == maxCoAuthors, a.ID == pp.AuthorID:
			continue
		case slices.ContainsFunc(pp.threads, func(th plannedThread) bool { return th.authorID == a.ID }):
			continue
		case slices.ContainsFunc(t.cats, func(c string) bool { return slices.Contains(a.topics, c) }):
			out = append(out, a.ID)
		}
	}
	return out
}

// readerThreads plans the demo reader's comments on the post pp: one
// answered by its author, and one held for moderation.
func readerThreads(pp plannedPost, t topic) []plannedThread {
	return []plannedThread{
		{
			plannedComment: plannedComment{authorID: Reader.ID, body: fill(readerThread.comment, t), reader: true},
			replies:        []plannedComment{{authorID: pp.AuthorID, body: fill(readerThread.answers[0], t)}},
		},
		{plannedComment: plannedComment{authorID: Reader.ID, body: readerPending, reader: true, held: true}},
	}
}

// pickAuthor picks, among the authors who write about the topic's primary
// category (everyone when nobody does), one of those with the fewest posts
// so far, and counts the post.
func pickAuthor(rng *rand.Rand, t topic, posts map[string]int) string {
	var ids []string
	for _, a := range authors {
		if slices.Contains(a.topics, t.cats[0]) {
			ids = append(ids, a.ID)
		}
	}
	if len(ids) == 0 {
		for _, a := range authors {
			ids = append(ids, a.ID)
		}
	}
	fewest := slices.MinFunc(ids, func(a, b string) int { return posts[a] - posts[b] })
	ids = slices.DeleteFunc(ids, func(id string) bool { return posts[id] > posts[fewest] })
	id := ids[rng.IntN(len(ids))]
	posts[id]++
	return id
}

// threads plans 2–5 top-level comments by other authors, each answered
// by the post's author or joined by other readers, up to 3 replies. No two
// top-level comments of a post, and no two replies of a thread, are the
// same: Seed relies on that to recognise them.
func threads(rng *rand.Rand, p plannedPost, t topic) []plannedThread {
	var out []plannedThread
	for _, ci := range rng.Perm(len(conversations))[:2+rng.IntN(4)] {
		conv := conversations[ci]
		th := plannedThread{plannedComment: plannedComment{
			authorID: otherAuthor(rng, p.AuthorID),
			body:     fill(conv.comment, t),
		}}
		answers := rng.Perm(len(conv.answers))
		chimes := rng.Perm(len(chimeIns))
		for range rng.IntN(4) {
			if len(answers) > 0 && rng.IntN(3) > 0 {
				th.replies = append(th.replies, plannedComment{authorID: p.AuthorID, body: fill(conv.answers[answers[0]], t)})
				answers = answers[1:]
				continue
			}
			th.replies = append(th.replies, plannedComment{
				authorID: otherAuthor(rng, p.AuthorID, th.authorID),
				body:     fill(chimeIns[chimes[0]], t),
			})
			chimes = chimes[1:]
		}
		out = append(out, th)
	}
	return out
}

// otherAuthor picks an author who is none of not.
func otherAuthor(rng *rand.Rand, not ...string) string {
	for {
		if id := authors[rng.IntN(len(authors))].ID; !slices.Contains(not, id) {
			return id
		}
	}
}

// body writes a Markdown post: an introduction, sections in random order
// (one of them a code example) until the target size is reached, and a
// conclusion.
func body(rng *rand.Rand, t topic) string {
	target := minBodyTarget + rng.IntN(maxBodyTarget-minBodyTarget+1)
	var b strings.Builder
	b.WriteString(fill(pick(rng, intros), t) + "\n\n" + pick(rng, secondParagraphs) + "\n\n")
	sections := []func(*strings.Builder, *rand.Rand, topic){
		backgroundSection, whySection, stepsSection, pitfallsSection,
		tradeoffSection, quoteSection, measureSection, faqSection, checklistSection,
		readingSection, furtherSection,
	}
	for n, i := range rng.Perm(len(sections)) {
		if n > 0 && b.Len() >= target {
			break
		}
		sections[i](&b, rng, t)
		if n == 0 {
			// Every post shows some code, right after its first section.
			exampleSection(&b, rng, t)
		}
	}
	b.WriteString("## Wrapping up\n\n" + fill(pick(rng, conclusions), t) + "\n")
	return b.String()
}

func backgroundSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Background\n\n")
	for _, i := range rng.Perm(len(backgrounds))[:2] {
		b.WriteString(fill(backgrounds[i], t) + "\n\n")
	}
}

func faqSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Questions we get\n\n")
	for _, i := range rng.Perm(len(faqs))[:2+rng.IntN(2)] {
		b.WriteString("**" + fill(faqs[i][0], t) + "**\n\n" + fill(faqs[i][1], t) + "\n\n")
	}
}

func checklistSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Checklist\n\nBefore calling " + t.subject + " done, we check that:\n\n")
	for _, i := range rng.Perm(len(checklist))[:3+rng.IntN(2)] {
		b.WriteString("- [ ] " + checklist[i] + "\n")
	}
	b.WriteString("\n")
}

func whySection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Why " + t.subject + " matters\n\n" + fill(pick(rng, whyParagraphs), t) + "\n\n")
	for _, i := range rng.Perm(len(bullets))[:3+rng.IntN(3)] {
		b.WriteString("- " + bullets[i] + "\n")
	}
	b.WriteString("\n")
}

func exampleSection(b *strings.Builder, rng *rand.Rand, t topic) {
	var pool []snippet
	for _, c := range t.cats {
		pool = append(pool, snippets[c]...)
	}
	if fresh := unused(b, pool); len(fresh) > 0 {
		pool = fresh
	}
	sn := pick(rng, pool)
	b.WriteString("## A minimal example\n\n" + sn.intro + "\n\n")
	b.WriteString("```" + sn.lang + "\n" + sn.code + "\n```\n\n")
	b.WriteString("Nothing in it is specific to our codebase; adapt the names and it should drop into yours.\n\n")
}

// furtherSection shows a second snippet of the post's categories.
func furtherSection(b *strings.Builder, rng *rand.Rand, t topic) {
	pool := unused(b, snippets[t.cats[len(t.cats)-1]])
	if len(pool) == 0 {
		return
	}
	sn := pick(rng, pool)
	b.WriteString("## Going further\n\nOnce the basics are in place, the next step usually looks like this. " + sn.intro + "\n\n")
	b.WriteString("```" + sn.lang + "\n" + sn.code + "\n```\n\n")
}

// unused returns the snippets of pool that b does not show yet.
func unused(b *strings.Builder, pool []snippet) []snippet {
	var out []snippet
	for _, sn := range pool {
		if !strings.Contains(b.String(), sn.code) {
			out = append(out, sn)
		}
	}
	return out
}

func stepsSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Step by step\n\nThis is the order we introduce " + t.subject + " in a new service:\n\n")
	idx := rng.Perm(len(steps))[:3+rng.IntN(3)]
	slices.Sort(idx) // the steps are listed in a sensible order
	for n, i := range idx {
		b.WriteString(strconv.Itoa(n+1) + ". " + steps[i] + "\n")
	}
	b.WriteString("\n")
}

func pitfallsSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Common pitfalls\n\n")
	for _, i := range rng.Perm(len(pitfalls))[:2+rng.IntN(3)] {
		b.WriteString("- " + pitfalls[i] + "\n")
	}
	b.WriteString("\n")
}

func tradeoffSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Trade-offs\n\nThe options we considered for " + t.subject + ", roughly from least to most effort:\n\n")
	b.WriteString("| Approach | Pros | Cons |\n|---|---|---|\n")
	idx := rng.Perm(len(tableRows))[:3]
	slices.Sort(idx)
	for _, i := range idx {
		r := tableRows[i]
		b.WriteString("| " + r[0] + " | " + r[1] + " | " + r[2] + " |\n")
	}
	b.WriteString("\n")
}

func quoteSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("> **Rule of thumb:** " + pick(rng, quotes) + "\n\n")
}

func measureSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Measuring the result\n\n" + pick(rng, measureParagraphs) + "\n\n")
	if sn := snippets["performance"][1]; rng.IntN(2) == 0 {
		b.WriteString("```" + sn.lang + "\n" + sn.code + "\n```\n\n")
	}
}

func readingSection(b *strings.Builder, rng *rand.Rand, t topic) {
	b.WriteString("## Further reading\n\n")
	for _, slug := range t.cats {
		b.WriteString("- [More posts about " + categoryName(slug) + "](https://example.com/categories/" + slug + ")\n")
	}
	b.WriteString("- [The " + t.subject + " chapter of our handbook](https://example.com/handbook/" + slugify(t.subject) + ")\n\n")
}

func categoryName(slug string) string {
	for _, c := range categories {
		if c.Slug == slug {
			return c.Name
		}
	}
	return slug
}

func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }

// fill expands the {subject}, {Subject} and {title} placeholders.
func fill(s string, t topic) string {
	return strings.NewReplacer("{subject}", t.subject, "{Subject}", capitalize(t.subject), "{title}", t.title).Replace(s)
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// slugify lower-cases s and joins its runs of letters and digits with
// single hyphens: "Error Wrapping in Go: errors.Is" → "error-wrapping-in-go-errors-is".
func slugify(s string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			hyphen = false
		case r == '\'':
			// "Don't" → "dont"
		default:
			hyphen = true
		}
	}
	return b.String()
}

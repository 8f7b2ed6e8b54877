package tests

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	graphpkg "github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/longtest"
	"github.com/blogql/blog/storage"
)

// TestMixedWorkload runs a seeded random mix of every mutation from
// concurrent clients over HTTP, for a bounded time: authors acting on
// their own posts and on others' (which provokes FORBIDDEN and NOT_FOUND),
// admins acting on everything, renames, category moves, schedules, slug
// changes onto other posts' and authors' old slugs, body, cover and SEO
// edits, preview links and previews read while their posts are
// unpublished and deleted, comments and replies of authors and of readers
// (with and without name and picture claims) through two servers on one
// table, one holding readers' comments and one publishing them, edits,
// approvals, rejections, approvals overturning rejections and deletions
// of comments by their writers and moderators, readers over their rate
// limit and sending the same comment twice, and resends of the same idempotency key, one after another or at
// the same moment as the first. It asserts that no response is INTERNAL
// or a 5xx, that every mutation's refusals are ones its situation
// explains, that every resend has one effect, that a comment sent again
// within a minute is refused, and that the invariant checker finds
// nothing afterwards. It logs its seed and a tally of the outcomes of
// each mutation.
//
// MIX_DURATION (a Go duration, default 3s), MIX_CLIENTS (default 8) and
// MIX_SEED (default: from the time) set the run; for example
//
//	BLOG_LONG=1 MIX_DURATION=60s MIX_CLIENTS=16 go test -run TestMixedWorkload -v ./tests
//
// The seed fixes every client's choices, though not how their requests
// interleave.
func TestMixedWorkload(t *testing.T) {
	longtest.Skip(t, "every mutation from MIX_CLIENTS clients for MIX_DURATION, 3 s by default")
	cfg := mixSettings(t)
	t.Logf("seed %d (MIX_SEED=%d runs these choices again), %d clients, %s", cfg.seed, cfg.seed, cfg.clients, cfg.duration)
	s := newServer(t, func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) { o.Comments.PerMinute = mixRateLimit })
	m := newMix(t, s, cfg)
	// Meanwhile a server of another renderer claims the table and its
	// sweep renders the posts again, again and again, under the writes.
	stop := rerenderDuring(t, s)
	m.run()
	stop()
	m.report()
	m.checkEffects()
	s.consistent()
}

// rerenderDuring claims s's table for another renderer (a site URL) and
// sweeps with it until the returned function is called, which then
// sweeps until the renderer is done and makes s check with it: every post
// must then be rendered by it, with no write lost.
func rerenderDuring(t *testing.T, s *server) (stop func()) {
	ctx := context.Background()
	other := storage.New(s.db, s.table, storage.WithClock(s.clock.Now), storage.WithSiteURL("https://blog.example"))
	ok[bool](t)(other.ClaimRenderer(ctx))
	ok[struct{}](t)(struct{}{}, s.store.RefreshRenderer(ctx))
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := other.Rerender(ctx); err != nil && !errors.Is(err, storage.ErrBusy) {
				t.Error(err)
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		for i := 0; ; i++ {
			s.clock.Advance(time.Minute)
			r := ok[storage.Rerendered](t)(other.Rerender(ctx))
			if r.Done || !r.Swept {
				break
			}
			if i > 5 {
				t.Fatalf("sweep %d: %+v", i, r)
			}
		}
		s.store = other
	}
}

// mixRateLimit is the readers' comment limit per minute in the mix: low,
// so that readers, shared by the clients, meet it.
const mixRateLimit = 3

// mixConfig is one run's settings.
type mixConfig struct {
	duration time.Duration
	clients  int
	seed     uint64
}

func mixSettings(t *testing.T) mixConfig {
	cfg := mixConfig{duration: 3 * time.Second, clients: 8, seed: uint64(time.Now().UnixNano())}
	if v := os.Getenv("MIX_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("MIX_DURATION=%q: want a positive duration such as 60s", v)
		}
		cfg.duration = d
	}
	if v := os.Getenv("MIX_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			t.Fatalf("MIX_CLIENTS=%q: want 1 to 64", v)
		}
		cfg.clients = n
	}
	if v := os.Getenv("MIX_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("MIX_SEED=%q: want an unsigned integer", v)
		}
		cfg.seed = n
	}
	return cfg
}

// mixMutations is the table of mutations the clients pick from, by
// weight. A new mutation takes one entry: a name for the tally, a weight,
// and next, which builds one call from what the client knows of the blog.
// Two reads that race writes are in it too: a preview and the queue.
var mixMutations = []mixMutation{
	{"createAuthor", 1, nextCreateAuthor},
	{"updateAuthor", 2, nextUpdateAuthor("bio")},
	{"updateAuthor rename", 2, nextUpdateAuthor("name")},
	{"updateAuthor slug", 3, nextUpdateAuthor("slug")},
	{"createCategory", 1, nextCreateCategory},
	{"updateCategory", 1, nextUpdateCategory(false)},
	{"updateCategory rename", 2, nextUpdateCategory(true)},
	{"createPost", 6, nextCreatePost},
	{"updatePost", 2, nextUpdatePost("title")},
	{"updatePost slug", 3, nextUpdatePost("slug")},
	{"updatePost categories", 3, nextUpdatePost("categories")},
	{"updatePost content", 3, nextUpdatePost("content")},
	{"updatePost remove cover", 1, nextRemoveCover},
	{"publishPost now", 3, nextPublishPost(0)},
	{"publishPost past", 2, nextPublishPost(-1)},
	{"publishPost future", 3, nextPublishPost(1)},
	{"unpublishPost", 2, nextUnpublishPost},
	{"deletePost", 1, nextDeletePost},
	{"createPreviewLink", 2, nextCreatePreviewLink},
	{"post(previewToken)", 3, nextPreview},
	{"addComment", 4, nextAddComment(false)},
	{"addComment reply", 3, nextAddComment(true)},
	{"addComment reader held", 3, nextReaderComment(false, holding)},
	{"addComment reader published", 3, nextReaderComment(false, publishing)},
	{"addComment reader reply held", 2, nextReaderComment(true, holding)},
	{"addComment reader reply published", 2, nextReaderComment(true, publishing)},
	{"addComment reader again", 2, nextReaderAgain},
	{"updateComment", 3, nextUpdateComment},
	{"approveComment", 3, nextModerate(approveIt)},
	{"approveComment overturn", 1, nextModerate(overturnIt)},
	{"rejectComment", 2, nextModerate(rejectIt)},
	{"deleteComment", 3, nextDeleteComment},
	{"moderationQueue", 1, nextModerationQueue},
	{"createPage", 2, nextCreatePage},
	{"updatePage", 2, nextUpdatePage},
	{"publishPage", 2, nextPublishPage(true)},
	{"unpublishPage", 1, nextPublishPage(false)},
	{"deletePage", 1, nextDeletePage},
	{"updateSite", 1, nextUpdateSite},
	{"updatePost co-authors", 2, nextUpdatePostCoAuthors},
	{"updatePost tags", 2, nextUpdatePostTags},
	{"renameTag", 1, nextRenameTag},
	{"setPostFeatured", 2, nextSetFeatured},
	{"createSeries", 1, nextCreateSeries},
	{"addPostToSeries", 2, nextSeriesPost("add")},
	{"removePostFromSeries", 1, nextSeriesPost("remove")},
	{"moveSeriesPost", 2, nextSeriesPost("move")},
	{"restorePostRevision", 1, nextRestoreRevision},
}

// mixMutation is one entry of mixMutations.
type mixMutation struct {
	name   string
	weight int
	// next returns the call client c makes next, or nil when nothing
	// fits yet (say, no comment to reply to).
	next func(c *mixClient) *mixCall
}

// mixCall is one mutation as a client means it: the same input every
// time it is sent.
type mixCall struct {
	// send sends the mutation with key (nil: none) and returns what its
	// result says that a resend must repeat: the ids, versions and values
	// the write set, not what changes with time (counts, status).
	send func(ctx context.Context, key *string) (string, error)
	// keyless calls take no idempotency key: they are sent once.
	keyless bool
	// refusals are the outcomes its situation explains, besides the
	// transient UNAVAILABLE and TIMEOUT: a code, or a code and the
	// reason its extensions give ("CONFLICT/DUPLICATE_COMMENT").
	refusals []string
	// done, when set, is told of every answer, ok for a success: what a
	// write may have done, as far as the effects checked at the end go.
	done func(result string, ok bool)
	// unsure lists codes that can come back although the write took
	// effect: addComment's payload reads the post, which may have gone
	// from view since. A code with "@" and the end of a path is that code
	// for that field only: approveComment's payload reads the comment's
	// post, which may be deleted before a resend replays the approval
	// ("NOT_FOUND@comment.post").
	unsure []string
	// flips lists refusals for a state that can change back (a post
	// published, then unpublished): a send with the key that ran before
	// another one's success may have met it. Other refusals beside a
	// success mean a resend did not replay it.
	flips []string
}

package tests

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// The change feed's latency targets (docs/performance.md), measured
// through the server binary over loopback on the backend the tests use:
//
//	go test -run '^$' -bench 'WebhookLatency|GoLiveLatency' -benchtime 200x ./tests
//
// Each reports the p50, p99 and largest latency in milliseconds of its
// b.N samples; ns/op means nothing here.

// BenchmarkWebhookLatency: a comment acknowledged (addComment answered)
// until its comment.added is received by a webhook, for b.N comments
// written one at a time, one every 50 ms.
func BenchmarkWebhookLatency(b *testing.B) {
	s := startFeedServer(b)
	ctx := context.Background()
	writer := s.writer()
	r := newFeedReceiver(b)
	s.hook(writer, r, "comment.added")
	post := ok[*CreatePostResponse](b)(CreatePost(ctx, writer, CreatePostInput{Title: "Busy", Slug: "busy"})).CreatePost.Post
	ok[*PublishPostResponse](b)(PublishPost(ctx, writer, PublishPostInput{Id: post.Id}))
	postID := rawID(b, post.Id, "Post")

	acked := map[string]time.Time{} // "<postId>:<commentId>": when it was answered
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		c := ok[*PostCommentResponse](b)(PostComment(ctx, writer, AddCommentInput{PostId: post.Id, Body: "Comment " + strconv.Itoa(i)})).AddComment.Comment
		acked[rawID(b, c.Id, "Comment")] = time.Now()
		<-tick.C
	}
	got := r.waitFor(b, "every comment", func(ds []delivery) bool { return len(received(ds, postID)) >= len(acked) })
	b.StopTimer()
	at := received(got, postID)
	var ms []float64
	for k, t := range acked {
		ms = append(ms, float64(at[k].Sub(t))/float64(time.Millisecond))
	}
	reportLatency(b, ms)
}

// BenchmarkGoLiveLatency: a scheduled post's publishedAt until its
// post.published is received by a webhook, for b.N posts scheduled 100 ms
// apart (or more: each at least a second after it was written).
func BenchmarkGoLiveLatency(b *testing.B) {
	s := startFeedServer(b)
	ctx := context.Background()
	writer := s.writer()
	r := newFeedReceiver(b)
	s.hook(writer, r, "post.published")

	due := map[string]time.Time{} // post id: its publishedAt
	b.ResetTimer()
	var when time.Time
	for i := range b.N {
		p := ok[*CreatePostResponse](b)(CreatePost(ctx, writer, CreatePostInput{Title: "Later", Slug: "later-" + strconv.Itoa(i)})).CreatePost.Post
		// 100 ms after the previous one, and at least a second ahead of
		// its write, whatever the backend's pace.
		when = when.Add(100 * time.Millisecond)
		if soonest := time.Now().Add(time.Second).Truncate(time.Millisecond); when.Before(soonest) {
			when = soonest
		}
		ok[*PublishPostResponse](b)(PublishPost(ctx, writer, PublishPostInput{Id: p.Id, At: &when}))
		due[rawID(b, p.Id, "Post")] = when
	}
	live := func(ds []delivery) map[string]time.Time {
		at := map[string]time.Time{}
		for _, d := range ds {
			if _, ok := due[d.Data.PostID]; ok && d.Type == string(storage.EventPostPublished) && at[d.Data.PostID].IsZero() {
				at[d.Data.PostID] = d.At
			}
		}
		return at
	}
	got := r.waitFor(b, "every go-live", func(ds []delivery) bool { return len(live(ds)) == len(due) })
	b.StopTimer()
	at := live(got)
	var ms []float64
	for id, t := range due {
		if at[id].Before(t) {
			b.Fatalf("post %s went live at %v, before its time %v", id, at[id], t)
		}
		ms = append(ms, float64(at[id].Sub(t))/float64(time.Millisecond))
	}
	reportLatency(b, ms)
}

// received returns when each comment of the post postID was first
// received, by "<postId>:<commentId>".
func received(ds []delivery, postID string) map[string]time.Time {
	at := map[string]time.Time{}
	for _, d := range ds {
		k := d.Data.PostID + ":" + d.Data.CommentID
		if d.Data.PostID == postID && d.Type == string(storage.EventCommentAdded) && at[k].IsZero() {
			at[k] = d.At
		}
	}
	return at
}

// reportLatency reports the p50, p99 and largest of ms.
func reportLatency(b *testing.B, ms []float64) {
	slices.Sort(ms)
	pct := func(p float64) float64 { return ms[min(len(ms)-1, int(p*float64(len(ms))))] }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(ms[len(ms)-1], "max-ms")
	b.ReportMetric(0, "ns/op")
}

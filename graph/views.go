package graph

import (
	"cmp"
	"context"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/views"
)

// The bounds of Post.stats and popularPosts.
const (
	maxStatsDays    = 90
	maxTopReferrers = 10
	maxPopular      = 100
)

// viewerKey is the context key of the client of a request as recordView
// counts it (withViewer).
type viewerKey struct{}

// viewer is who sent a request, as recordView counts it: its address is
// the views' (-views-client-ip-header), which may differ from the
// connection's that the sign-in limits take (withClient).
type viewer struct{ ip, userAgent string }

// withViewer keeps the address and user agent of each request's client
// for recordView.
func withViewer(counter *views.Counter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := viewer{ip: counter.ClientIP(r), userAgent: r.UserAgent()}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewerKey{}, c)))
	})
}

// volatile marks the answer of ctx as one the answer cache does not keep
// and shared caches do not either: views and reactions change with no
// event of the change feed to drop it by.
func volatile(ctx context.Context) { gqlhttp.Untagged(ctx) }

// recordView answers recordView: the view of the request's client, counted
// as a beacon's. Without a counter nothing is counted.
func (r *Resolver) recordView(ctx context.Context, in model.RecordViewInput) (*model.RecordViewPayload, error) {
	id, err := decodeIDOf("postId", in.PostID, kindPost)
	if err != nil {
		return nil, err
	}
	if r.views == nil {
		return &model.RecordViewPayload{}, nil
	}
	c, _ := ctx.Value(viewerKey{}).(viewer)
	out := r.views.Record(ctx, views.Hit{PostID: id, IP: c.ip, UserAgent: c.userAgent, Referrer: deref(in.Referrer)})
	return &model.RecordViewPayload{Counted: out == views.Counted}, nil
}

// viewCount answers Post.viewCount through the request's loader of view
// counts: one BatchGetItem for the posts of an operation.
func (r *Resolver) viewCount(ctx context.Context, p *storage.Post) (int, error) {
	volatile(ctx)
	l := loadersFor(ctx)
	l.ahead.await(primedViewsKey(p.ID)) // read with its list's (primePosts)
	n, err := l.views.Load(ctx, p.ID)()
	return int(n), err
}

// viewCountsOf returns the batch read of the views loader.
func viewCountsOf(store *storage.Store) func(context.Context, []string) ([]int64, []error) {
	return func(ctx context.Context, ids []string) ([]int64, []error) {
		counts, err := store.ViewCounts(ctx, ids)
		if err != nil {
			return make([]int64, len(ids)), slices.Repeat([]error{err}, len(ids))
		}
		return counts, make([]error, len(ids))
	}
}

// postStats answers Post.stats: FORBIDDEN for anyone but the post's
// authors and admins.
func (r *Resolver) postStats(ctx context.Context, p *storage.Post, days *int) (*model.PostStats, error) {
	if err := actsForPost(ctx, p, false); err != nil {
		return nil, err
	}
	n := 30
	if days != nil {
		n = *days
	}
	if n < 1 || n > maxStatsDays {
		return nil, &storage.ValidationError{Field: "days", Reason: "must be from 1 to 90"}
	}
	today := r.store.Now().UTC().Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, 1-n)
	got, err := r.store.PostViewDays(ctx, p.ID, from, today)
	if err != nil {
		return nil, err
	}
	byDay := map[string]int64{}
	refs := map[string]int64{}
	for _, d := range got {
		byDay[d.Day.Format(time.DateOnly)] = d.Views
		for domain, v := range d.Referrers {
			refs[domain] += v
		}
	}
	out := &model.PostStats{Days: make([]*model.ViewsOnDay, 0, n), TopReferrers: []*model.ReferrerViews{}}
	for d := from; !d.After(today); d = d.AddDate(0, 0, 1) {
		v := byDay[d.Format(time.DateOnly)]
		out.Days = append(out.Days, &model.ViewsOnDay{Date: d.Format(time.DateOnly), Views: int(v)})
		out.Views += int(v)
	}
	domains := slices.SortedFunc(maps.Keys(refs), func(a, b string) int {
		return cmp.Or(cmp.Compare(refs[b], refs[a]), cmp.Compare(a, b))
	})
	for _, d := range domains[:min(len(domains), maxTopReferrers)] {
		out.TopReferrers = append(out.TopReferrers, &model.ReferrerViews{Domain: d, Views: int(refs[d])})
	}
	return out, nil
}

// popularPosts answers popularPosts: one Query of the period's list,
// whose entries carry their posts' summaries.
func (r *Resolver) popularPosts(ctx context.Context, period model.PopularPeriod, first *int) ([]*model.PopularPost, error) {
	volatile(ctx)
	n := 10
	if first != nil {
		n = *first
	}
	if n < 1 || n > maxPopular {
		return nil, &storage.ValidationError{Field: "first", Reason: "must be from 1 to 100"}
	}
	list, err := r.store.PopularPosts(ctx, string(period), r.store.Now(), n)
	if err != nil {
		return nil, err
	}
	out := make([]*model.PopularPost, len(list))
	for i, e := range list {
		out[i] = &model.PopularPost{Post: e.Post, Views: int(e.Views)}
	}
	return out, nil
}

package routing

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/maypok86/otter/v2"
	"golang.org/x/time/rate"

	"github.com/blogql/blog/gqlhttp"
)

// Rate limits, applied by the router before a request reaches its
// publication's handler:
//
//   - LookupsPerSecond bounds the directory lookups a server makes for
//     hosts it does not hold (a burst of as many): past it a request for
//     such a host gets 429 before any DynamoDB request, so a flood of
//     distinct unknown Host names costs at most that many GetItems a
//     second, while held hosts are served as before.
//   - PublicationPerMinute bounds the requests of each publication a
//     server serves (a burst of a minute's worth): past it the
//     publication's requests get 429 with Retry-After, whichever host
//     they came by, and the other publications' are served as before.

// CodeRateLimited is the extensions.code of a request refused by a rate
// limit (graph.CodeRateLimited's).
const CodeRateLimited = "RATE_LIMITED"

// limiterIdle is how long a publication's limiter is kept after its
// last request; a new one starts full.
const limiterIdle = 2 * time.Minute

// limits are the router's rate limiters.
type limits struct {
	lookups   *rate.Limiter // nil: no bound
	perMinute int
	pubs      *otter.Cache[string, *rate.Limiter]
}

func newLimits(opts Options) limits {
	l := limits{perMinute: opts.PublicationPerMinute}
	if opts.LookupsPerSecond > 0 {
		l.lookups = rate.NewLimiter(rate.Limit(opts.LookupsPerSecond), opts.LookupsPerSecond)
	}
	if l.perMinute > 0 {
		l.pubs = otter.Must(&otter.Options[string, *rate.Limiter]{
			MaximumSize:      opts.MaxHosts,
			ExpiryCalculator: otter.ExpiryAccessing[string, *rate.Limiter](limiterIdle),
		})
	}
	return l
}

// lookup reports whether a lookup of a host not held may be made now.
func (l *limits) lookup() bool { return l.lookups == nil || l.lookups.Allow() }

// admit reports whether a request of the publication id may be served
// now, and when not, how long until one may.
func (l *limits) admit(id string) (bool, time.Duration) {
	if l.pubs == nil {
		return true, 0
	}
	lim, _ := l.pubs.ComputeIfAbsent(id, func() (*rate.Limiter, bool) {
		return rate.NewLimiter(rate.Limit(float64(l.perMinute)/60), l.perMinute), false
	})
	r := lim.Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return false, d
	}
	return true, 0
}

// limited answers 429 with Retry-After (whole seconds, at least one): a
// GraphQL error with CodeRateLimited on /graphql, plain text elsewhere.
func limited(w http.ResponseWriter, r *http.Request, retry time.Duration, message string) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(retry.Seconds())))))
	if r.URL.Path != "/graphql" {
		plain(w, http.StatusTooManyRequests, message)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	gqlhttp.WriteError(w, http.StatusTooManyRequests, message, CodeRateLimited)
}

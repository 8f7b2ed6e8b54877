package gqlhttp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/time/rate"
)

// Automatic persisted queries, as Apollo defines them: a client sends the
// SHA-256 hash of its query in extensions.persistedQuery; a server that
// knows the hash runs the query it stands for, one that does not answers
// PERSISTED_QUERY_NOT_FOUND, and the client sends the query with its hash
// once, which registers it. A hash-only GET URL is short and stable,
// which is what a CDN keys on.
//
// The queries are kept in memory (a byteCache), in front of a
// PersistedQueryStore when Options.PersistedQueries has one: a hash the
// memory does not hold is looked up there (a restart, or another server
// of the fleet, knows what one server was sent), and a registration is
// written there. What a client can make a server keep is bounded: a
// registration is kept only once its document has parsed, validated and
// passed every limit (the query size, tokens, depth, aliases, root fields
// and complexity); the hash must be the query's; and each server writes
// at most Options.PersistedQueryWrites registrations a second to the
// store (past that the query runs, and is kept in memory only).

// CodePersistedQueryNotFound is the code of a hash the server does not
// know: the client sends the query with it.
const CodePersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"

// DefaultPersistedQueryWrites is how many registrations a second a server
// writes to its PersistedQueryStore when Options.PersistedQueryWrites is
// zero: a frontend registers its few dozen documents once, after a
// deploy.
const DefaultPersistedQueryWrites = 10

// PersistedQueryStore keeps automatic persisted queries for every server
// and beyond a restart. refreshAt is when the registration should next be
// refreshed (a zero time: never); a registration not refreshed expires.
type PersistedQueryStore interface {
	// LoadPersistedQuery returns the live query registered under hash,
	// as the client sent it; found is false when there is none. Only a
	// SHA-256 is ever registered (the handler checks a registration's
	// hash against its query), so a store need look up nothing for a
	// hash that cannot be one.
	LoadPersistedQuery(ctx context.Context, hash string) (query string, refreshAt time.Time, found bool, err error)
	// SavePersistedQuery registers query under hash, its SHA-256.
	SavePersistedQuery(ctx context.Context, hash, query string) (refreshAt time.Time, err error)
	// RefreshPersistedQuery moves the expiry of hash's registration on.
	RefreshPersistedQuery(ctx context.Context, hash string) (refreshAt time.Time, err error)
}

// persistedEntry is a query in memory, with when its registration in the
// store is next refreshed (Unix nanoseconds; 0: never).
type persistedEntry struct {
	query     string
	refreshAt atomic.Int64
}

func newPersistedEntry(query string, refreshAt time.Time) *persistedEntry {
	e := &persistedEntry{query: query}
	if !refreshAt.IsZero() {
		e.refreshAt.Store(refreshAt.UnixNano())
	}
	return e
}

// persistedQueries holds the queries and the store; lookup and register
// are its two extensions.
type persistedQueries struct {
	cache  *byteCache[*persistedEntry]
	store  PersistedQueryStore // nil: memory only
	writes *rate.Limiter       // nil: none written
	now    func() time.Time
}

// persistedRegistration is what lookup leaves in the operation's stats for
// register: a query sent with its hash, to keep once it passed.
type persistedRegistration struct{ hash, query string }

const persistedStatsKey = "gqlhttp.persistedQuery"

// lookup is the extension that reads the hash of a request: it puts the
// query of a known hash in the request, answers PERSISTED_QUERY_NOT_FOUND
// for an unknown one, and checks the hash of a query sent with one. It
// must be added after querySizeLimit.
type lookup struct{ *persistedQueries }

// register is the extension that keeps a query sent with its hash once it
// passed validation and the limits. It must be added after them.
type register struct{ *persistedQueries }

var (
	_ graphql.OperationParameterMutator = lookup{}
	_ graphql.OperationContextMutator   = register{}
)

func (lookup) ExtensionName() string                     { return "PersistedQueryLookup" }
func (lookup) Validate(graphql.ExecutableSchema) error   { return nil }
func (register) ExtensionName() string                   { return "PersistedQueryRegister" }
func (register) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters fills in the query of a hash, or returns why
// it cannot.
func (p lookup) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	ext, ok := params.Extensions["persistedQuery"].(map[string]any)
	if !ok {
		if params.Extensions["persistedQuery"] != nil {
			return badRequest("invalid APQ extension data")
		}
		return nil
	}
	if !isOne(ext["version"]) {
		return badRequest("unsupported APQ version")
	}
	hash, _ := ext["sha256Hash"].(string)
	if params.Query != "" {
		sum := sha256.Sum256([]byte(params.Query))
		if hex.EncodeToString(sum[:]) != hash {
			return badRequest("provided APQ hash does not match query")
		}
		if _, known := p.cache.Get(ctx, hash); !known {
			graphql.GetOperationContext(ctx).Stats.SetExtension(persistedStatsKey, persistedRegistration{hash, params.Query})
		}
		return nil
	}
	if e, ok := p.cache.Get(ctx, hash); ok {
		params.Query = e.query
		p.refresh(ctx, hash, e)
		return nil
	}
	if p.store == nil {
		return notFound()
	}
	query, refreshAt, found, err := p.store.LoadPersistedQuery(ctx, hash)
	if err != nil {
		return &gqlerror.Error{Message: "read persisted query", Err: err}
	}
	if !found {
		return notFound()
	}
	e := newPersistedEntry(query, refreshAt)
	p.cache.Add(ctx, hash, e)
	params.Query = query
	p.refresh(ctx, hash, e)
	return nil
}

// refresh moves on the expiry of hash's registration when it is due; of
// the requests that find it due at once, one refreshes. A failed refresh
// is not the request's failure: the query ran, and a registration that
// expires is registered again by its client.
func (p lookup) refresh(ctx context.Context, hash string, e *persistedEntry) {
	due := e.refreshAt.Load()
	now := p.now()
	if p.store == nil || due == 0 || now.UnixNano() < due || !e.refreshAt.CompareAndSwap(due, now.Add(time.Hour).UnixNano()) {
		return
	}
	if next, err := p.store.RefreshPersistedQuery(ctx, hash); err == nil {
		e.refreshAt.Store(next.UnixNano())
	}
}

// MutateOperationContext keeps the query the request registers, now that
// it passed: in memory, and in the store within the rate of writes.
func (p register) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	reg, ok := opCtx.Stats.GetExtension(persistedStatsKey).(persistedRegistration)
	if !ok {
		return nil
	}
	var refreshAt time.Time
	if p.store != nil && p.writes != nil && p.writes.AllowN(p.now(), 1) {
		at, err := p.store.SavePersistedQuery(ctx, reg.hash, reg.query)
		if err != nil {
			// Not stored: kept in this server's memory only, as past the
			// rate of writes. The query still runs.
			at = time.Time{}
		}
		refreshAt = at
	}
	p.cache.Add(ctx, reg.hash, newPersistedEntry(reg.query, refreshAt))
	return nil
}

// isOne reports whether a decoded JSON number is 1 (the transports decode
// numbers as json.Number).
func isOne(v any) bool {
	switch n := v.(type) {
	case json.Number:
		return n.String() == "1"
	case float64:
		return n == 1
	}
	return false
}

func notFound() *gqlerror.Error {
	err := gqlerror.Errorf("PersistedQueryNotFound")
	errcode.Set(err, CodePersistedQueryNotFound)
	return err
}

func badRequest(msg string) *gqlerror.Error {
	err := gqlerror.Errorf("%s", msg)
	errcode.Set(err, CodeBadRequest)
	return err
}

// newRateLimit returns a token bucket of perSecond events a second, as
// many at once after a quiet second; nil, which allows nothing, for zero
// or less.
func newRateLimit(perSecond int) *rate.Limiter {
	if perSecond <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(perSecond), perSecond)
}

package graph

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/graph/internal/warm"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// Reads started ahead. A page's requests that depend on nothing but its
// arguments go out at once instead of one after another: category(slug)
// reads the category and, when its posts are selected, starts their Query
// in the same moment; author(id) does the same with the author's posts;
// the feed reads the blog's counts with its shards. A post's comments are
// read ahead only when the post is known to be public before it is read
// (post(slug), from its slug's reservation: commentsAhead): the post may
// be one the reader may not see (a draft, a scheduled post), and a read
// of its comments, waited for before the answer, would make that answer
// slower and dearer than the one for a post that does not exist; they are
// read once the post is known to be visible. Comments read ahead take
// along the read of the writers the server saw on the same page last
// (commenterHints): a post page read before costs two round trips, its
// slug's reservation and then everything else. The child resolver then
// takes the result instead of reading it again, but only for exactly the list it would read itself
// (the same key, page and period, from its own arguments): a guess that
// differs costs a read and never changes an answer. Errors come out of
// the child as they would have; a read whose parent failed, or that no
// child took, is waited for and dropped before the answer is written, so
// the requests of an operation are all counted (extensions.cost) and none
// outlives it.

// ahead holds the reads one request started ahead, by the key of the list
// they read.
type ahead struct {
	mu    sync.Mutex
	wg    sync.WaitGroup
	reads map[string]*aheadRead
}

// aheadRead is one read started ahead; done is closed once res and err are
// set.
type aheadRead struct {
	done chan struct{}
	res  any
	err  error
}

// start runs read in the background under key, unless a read of key was
// started already.
func (a *ahead) start(ctx context.Context, key string, read func(context.Context) (any, error)) {
	a.startUnder(ctx, []string{key}, func(ctx context.Context, _ []int) (any, error) { return read(ctx) })
}

// startUnder runs read once in the background, under each of keys no read
// was started under yet; fresh holds the indexes of those keys. Nothing
// runs when there are none.
func (a *ahead) startUnder(ctx context.Context, keys []string, read func(ctx context.Context, fresh []int) (any, error)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reads == nil {
		a.reads = map[string]*aheadRead{}
	}
	r := &aheadRead{done: make(chan struct{})}
	var fresh []int
	for i, key := range keys {
		if _, ok := a.reads[key]; !ok {
			a.reads[key] = r
			fresh = append(fresh, i)
		}
	}
	if len(fresh) == 0 {
		return
	}
	a.wg.Add(1)
	warm.Go(func() {
		defer a.wg.Done()
		defer close(r.done)
		r.res, r.err = read(ctx, fresh)
	})
}

// take returns the result of the read started under key, waiting for it,
// or false when none was.
func (a *ahead) take(key string) (any, error, bool) {
	a.mu.Lock()
	r, ok := a.reads[key]
	a.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	<-r.done
	return r.res, r.err, true
}

// await waits for the read started under key, if one was.
func (a *ahead) await(key string) { a.take(key) }

// wait returns once every read started ahead is done.
func (a *ahead) wait() { a.wg.Wait() }

// readAhead returns the result of the read started ahead under key, or
// else what read returns; T is what both return.
func readAhead[T any](ctx context.Context, key string, read func() (T, error)) (T, error) {
	if res, err, ok := loadersFor(ctx).ahead.take(key); ok {
		v, _ := res.(T)
		return v, err
	}
	return read()
}

// startAhead starts read under key for the request of ctx, when it is a
// query: a mutation reads nothing before it writes.
func startAhead[T any](ctx context.Context, key string, read func(context.Context) (T, error)) {
	if op := graphql.GetOperationContext(ctx).Operation; op == nil || op.Operation != ast.Query {
		return
	}
	loadersFor(ctx).ahead.start(ctx, key, func(ctx context.Context) (any, error) { return read(ctx) })
}

// waitAhead is the response hook that lets every read started ahead end
// before the answer goes out.
func waitAhead(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if slot, ok := ctx.Value(loadersKey{}).(*loaderSlot); ok {
		if l := slot.current.Load(); l != nil {
			l.ahead.wait()
		}
	}
	return resp
}

// childArgs returns the arguments, as the request gives them, of the field
// name selected on the object the current field resolves to, an object of
// type typeName; false when the field is not selected exactly once.
func childArgs(ctx context.Context, typeName, name string) (map[string]any, bool) {
	oc := graphql.GetOperationContext(ctx)
	var args map[string]any
	n := 0
	for _, f := range collectFields(oc, graphql.GetFieldContext(ctx).Field.Selections, []string{typeName}) {
		if f.Name == name {
			n++
			args = f.ArgumentMap(oc.Variables)
		}
	}
	return args, n == 1
}

// listArgs returns the page and the period that the arguments of a list
// field (first, after, last, before, publishedAfter, publishedBefore) ask
// for, as the list's resolver will see them; false when they are not
// values of the types the schema gives them, or ask for no valid page.
func listArgs(args map[string]any) (storage.PageArgs, storage.Period, bool) {
	if args["locale"] != nil {
		return storage.PageArgs{}, storage.Period{}, false // another list, read by its field
	}
	first, ok1 := intArg(args["first"])
	last, ok2 := intArg(args["last"])
	after, ok3 := stringArg(args["after"])
	before, ok4 := stringArg(args["before"])
	from, ok5 := timeArg(args["publishedAfter"])
	to, ok6 := timeArg(args["publishedBefore"])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return storage.PageArgs{}, storage.Period{}, false
	}
	p, err := pageOf(first, after, last, before)
	return p, periodOf(from, to), err == nil
}

func intArg(v any) (*int, bool) {
	switch n := v.(type) {
	case nil:
		return nil, true
	case int64:
		i := int(n)
		return &i, int64(i) == n
	case int:
		return &n, true
	}
	return nil, false
}

func stringArg(v any) (*string, bool) {
	switch s := v.(type) {
	case nil:
		return nil, true
	case string:
		return &s, true
	}
	return nil, false
}

func timeArg(v any) (*time.Time, bool) {
	if v == nil {
		return nil, true
	}
	t, err := model.UnmarshalDateTime(v)
	return &t, err == nil
}

// listKey names the read of a page of a list, for readAhead.
func listKey(list string, p storage.PageArgs, per storage.Period) string {
	return fmt.Sprintf("%s|%+v|%d|%d", list, p, per.From.UnixNano(), per.To.UnixNano())
}

// listAhead starts the read of the list field of typeName that the field
// being resolved selects exactly once, for the page and period its
// arguments ask for, under the key key gives them.
func listAhead[T any](ctx context.Context, typeName, field string, key func(storage.PageArgs, storage.Period) string, read func(context.Context, storage.PageArgs, storage.Period) (T, error)) {
	args, ok := childArgs(ctx, typeName, field)
	if !ok {
		return
	}
	p, per, ok := listArgs(args)
	if !ok {
		return
	}
	startAhead(ctx, key(p, per), func(ctx context.Context) (T, error) { return read(ctx, p, per) })
}

// statsAhead starts the read of the blog-wide counts, when the field being
// resolved (a list of the whole blog's posts) selects totalCount.
func statsAhead(ctx context.Context, typeName string) {
	if _, ok := childArgs(ctx, typeName, "totalCount"); ok {
		loadersFor(ctx).stats.Load(ctx, struct{}{})
	}
}

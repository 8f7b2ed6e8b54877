package graph

import (
	"context"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/storage"
)

// What an operation cost. Every answer can say what it took from DynamoDB,
// in extensions.cost:
//
//	"extensions": {"cost": {"dynamodbRequests": 2, "readCapacityUnits": 1.5, "writeCapacityUnits": 0}}
//
// dynamodbRequests counts the API calls the operation made (a retry of a
// call is part of it), readCapacityUnits and writeCapacityUnits the
// capacity DynamoDB reported they consumed (ReturnConsumedCapacity), which
// is what on-demand tables bill: a read unit per 4 KB read with strong
// consistency and half as much eventually consistent, a write unit per
// 1 KB written, twice as much in a transaction. The embedded engine
// reports them as DynamoDB would. Only an admin's answer shows them:
// always when HandlerOptions.ShowCost is set (the embedded mode), else
// when the request asks with the CostHeader header. Anyone else could
// tell from them what an answer leaves out (the comments a hidden post
// has take read capacity to find, a missing post's none).

// CostHeader is the request header that asks for extensions.cost in the
// answer: "1" or "true". Such an answer is for the developer who asked
// and is never stored by caches (Cache-Control: no-store); a cache that
// answers the request from what it stored answers it without the cost,
// which is nothing then.
const CostHeader = "X-Request-Cost"

// Cost is what an operation took from DynamoDB, as extensions.cost shows
// it.
type Cost struct {
	// DynamoDBRequests is the number of DynamoDB API calls.
	DynamoDBRequests int `json:"dynamodbRequests"`
	// ReadCapacityUnits is the read capacity they consumed.
	ReadCapacityUnits float64 `json:"readCapacityUnits"`
	// WriteCapacityUnits is the write capacity they consumed.
	WriteCapacityUnits float64 `json:"writeCapacityUnits"`
}

// requestCost counts one request's DynamoDB calls, and says whether its
// answer shows them.
type requestCost struct {
	counter *storage.Counter
	show    bool
}

type requestCostKey struct{}

// withCost counts the DynamoDB calls of every request passing through next
// (the calls count in any counter the request's context already has, too)
// and marks the requests whose answers show them: all with always, else
// those that ask with CostHeader, whose answers are not stored.
func withCost(always bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := storage.WithRequestCounter(r.Context())
		rc := &requestCost{counter: counter, show: always}
		if !always && asksCost(r.Header.Get(CostHeader)) {
			rc.show = true
			gqlhttp.NoStore(ctx)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, requestCostKey{}, rc)))
	})
}

// asksCost reports whether a CostHeader value asks for the cost.
func asksCost(v string) bool {
	v = strings.TrimSpace(v)
	return v == "1" || strings.EqualFold(v, "true")
}

// reportCost is the response hook that puts the operation's cost in the
// extensions of its answer, when the request's answer shows it and the
// request is an admin's. It runs
// once every resolver, and every read started on their behalf, is done.
func reportCost(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	rc, _ := ctx.Value(requestCostKey{}).(*requestCost)
	if resp == nil || rc == nil || !rc.show || !auth.ActorFrom(ctx).IsAdmin() {
		return resp
	}
	read, write := rc.counter.Capacity()
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["cost"] = Cost{
		DynamoDBRequests:   rc.counter.Total(),
		ReadCapacityUnits:  read,
		WriteCapacityUnits: write,
	}
	return resp
}

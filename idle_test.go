package main

import (
	"bufio"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/internal/longtest"
)

// writeOperations are the DynamoDB operations that write.
var writeOperations = []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}

// TestAnIdleServerWritesNothing starts the server on the demo platform
// with every worker at work once: a webhook delivered, a post published
// (its newsletter, numbered pages, search), a comment counted on its
// summaries, a view counted, the re-render of both publications done.
// Then, nothing sent, it counts the DynamoDB requests the server's own
// metrics report while it reads its stream 480 times (at least 12 s: the
// embedded engine's stream is read 25 ms apart at the most, which spans
// the re-render's 10 s tick and a dozen of the schedule's, the webhook
// retries' and the count and page syncs'; on DynamoDB 140 reads, a
// minute or more). The embedded server writes nothing. On DynamoDB (a long test: a fleet's re-render settles a
// minute after the claim) a server writes its heartbeat, one UpdateItem
// a round of its coordinator (each round describes the stream once),
// and nothing else.
func TestAnIdleServerWritesNothing(t *testing.T) {
	args, env, _ := platformBackend(t)
	onDynamoDB := env["DYNAMODB_ENDPOINT"] != ""
	if onDynamoDB {
		longtest.Skip(t, "an idle server on DynamoDB, whose re-render settles a minute after its claim")
	}
	base, logs, stop := startServer(t, append(args, "-metrics-addr", "127.0.0.1:0", "-webhooks-allow-private-unsafe", "-webhooks-allow-http=true"), env)
	defer stop()
	metricsURL := logs.field("metrics")
	if metricsURL == "" {
		t.Fatalf("no log line tells where the metrics are:\n%s", logs)
	}
	hooks := &hookLog{}
	receiver := httptest.NewServer(hooks)
	defer receiver.Close()
	admin := platformToken(t, "admin", "ops")

	mustGraphQL(t, base, "localhost", fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: ["post.published"]}) { secret } }`, receiver.URL+"/a"), nil, admin)
	mustGraphQL(t, base, "localhost", `mutation { createAuthor(input: {subject: "ops", name: "Ops"}) { author { id } } }`, nil, admin)
	post := newPost(t, base, "localhost", "A quiet day", "a-quiet-day", admin)
	mustGraphQL(t, base, "localhost", fmt.Sprintf(`mutation { addComment(input: {postId: %q, body: "Quiet indeed."}) { comment { id } } }`, post), nil, admin)
	view := request{method: http.MethodPost, url: base + "/v/" + rawPostID(t, post), host: "localhost", headers: []string{"User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0"}}
	if code, _, body := view.do(t); code != http.StatusNoContent {
		t.Fatalf("view beacon = %d %s", code, body)
	}

	eventually(t, "the post.published delivered", func() bool { return len(hooks.deliveries("/a", "a-quiet-day")) > 0 }, hooks.String)
	last := ""
	eventually(t, "the comment and the view counted", func() bool {
		_, last = graphQLAt(t, base, "localhost", `{ posts(first: 5) { edges { node { id commentCount viewCount } } } }`)
		return strings.Contains(last, fmt.Sprintf(`{"id":%q,"commentCount":1,"viewCount":1}`, post))
	}, func() string { return last })
	// On DynamoDB the re-render settles a minute after the claim.
	for deadline := time.Now().Add(3 * time.Minute); !logs.has(`"walk_done":true`); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the re-render of every publication not done within 3 minutes:\n%s", logs)
		}
	}
	// idle reports whether the requests from before to after are an idle
	// server's: no write on the embedded engine; on DynamoDB the
	// heartbeat, one UpdateItem a round of the coordinator, which
	// describes the stream once a round.
	idle := func(before, after map[string]int) bool {
		w := written(before, after)
		if !onDynamoDB {
			return len(w) == 0
		}
		return len(w) == 0 || len(w) == 1 && w["UpdateItem"] > 0 && w["UpdateItem"] <= after["DescribeStream"]-before["DescribeStream"]+1
	}

	// reads returns the requests of the next n reads of the stream: at
	// least n×25 ms.
	reads := func(n int) (before, after map[string]int) {
		before = dynamoDBRequests(t, metricsURL)
		for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			if after = dynamoDBRequests(t, metricsURL); after["GetRecords"] >= before["GetRecords"]+n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not %d reads of the stream within 5 minutes: %v", n, diff(before, after))
			}
		}
		return before, after
	}
	// Start-up settles: the last syncs are written (a page index's is
	// made a tick after its post), the shard's checkpoint moves past
	// their records (a second at most on the embedded engine), and each
	// worker's checkpoint follows, 10 s at most after its last move
	// (changefeed.DefaultWorkerCheckpointEvery). Once 480 reads (12 s)
	// went by without a write, the window of 480 more: a writer of a
	// period up to 12 s never lets the server settle, and one of up to
	// 24 s writes in the window.
	settleReads, windowReads := 480, 480
	if onDynamoDB {
		// A read every 450 ms when the shard is quiet: 140 span a minute.
		settleReads, windowReads = 30, 140
	}
	for quiet := 0; ; quiet++ {
		if quiet == 30 {
			t.Fatalf("the server never went %d reads of its stream without a write but its heartbeat", settleReads)
		}
		if b, a := reads(settleReads); idle(b, a) {
			break
		}
	}
	before, after := reads(windowReads)
	if !idle(before, after) {
		t.Errorf("an idle server wrote %v in %d reads of its stream and %d rounds of its coordinator, want nothing on the embedded engine, a heartbeat a round on DynamoDB",
			written(before, after), after["GetRecords"]-before["GetRecords"], after["DescribeStream"]-before["DescribeStream"])
	}
	t.Logf("requests while idle: %v", diff(before, after))
}

// dynamoDBRequests returns the DynamoDB requests the server at metricsURL
// reports, by operation, whatever their outcome.
func dynamoDBRequests(t testing.TB, metricsURL string) map[string]int {
	t.Helper()
	code, body := httpGet(t, metricsURL)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d", metricsURL, code)
	}
	out := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), `blog_dynamodb_requests_total{operation="`)
		if !ok {
			continue
		}
		op, rest, _ := strings.Cut(rest, `"`)
		_, value, _ := strings.Cut(rest, "} ")
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", sc.Text(), err)
		}
		out[op] += int(n)
	}
	return out
}

// written returns the write requests made from before to after, by
// operation.
func written(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for _, op := range writeOperations {
		if n := after[op] - before[op]; n > 0 {
			out[op] = n
		}
	}
	return out
}

// diff returns what grew from before to after.
func diff(before, after map[string]int) map[string]int {
	out := maps.Clone(after)
	for k, v := range out {
		if out[k] = v - before[k]; out[k] == 0 {
			delete(out, k)
		}
	}
	return out
}

package webhooks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// verifierDir holds the Node receiver that verifies deliveries with the
// npm package standardwebhooks; scripts/webhook-verify.sh installs it and
// runs this test with WEBHOOK_VERIFY=1, which makes its absence a failure.
const verifierDir = "../scripts/webhook-verify"

// TestStandardWebhooksVerifiesEveryDelivery sends deliveries of every
// event a webhook can receive, a ping, a redelivery and, after a
// rotation, messages signed twice to a receiver that verifies each with
// the specification's reference library, knowing the first secret only.
// Every one must verify.
func TestStandardWebhooksVerifiesEveryDelivery(t *testing.T) {
	if _, err := os.Stat(filepath.Join(verifierDir, "node_modules", "standardwebhooks")); err != nil {
		if os.Getenv("WEBHOOK_VERIFY") == "1" {
			t.Fatalf("WEBHOOK_VERIFY=1 but the verifier is not installed: %v", err)
		}
		t.Skip("the Node verifier is not installed: run scripts/webhook-verify.sh")
	}
	// The library checks webhook-timestamp against its own clock.
	e := newEnv(t, func(o *webhooks.Options) { o.Now = time.Now })
	w, secret := e.create("http://127.0.0.1:1/", storage.PublicEvents...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "receiver.mjs")
	cmd.Dir = verifierDir
	cmd.Env = append(os.Environ(), "WEBHOOK_SECRETS="+secret, "PORT=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	defer cancel()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the receiver did not start: %v", err)
	}
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("the receiver said %q", line)
	}
	base := "http://127.0.0.1:" + port
	url := base + "/hooks/blog"
	if _, err := e.hooks.Update(ctx, w.ID, storage.WebhookInput{URL: &url}); err != nil {
		t.Fatal(err)
	}

	var events []storage.Event
	for i, typ := range storage.PublicEvents {
		ev := e.published(string(rune('a' + i)))
		ev.Type = typ
		ev.Data.Slug = "héllo-wörld-✓"
		ev.Data.PreviousSlugs = []string{"old</script>", `quote"d`}
		events = append(events, ev)
	}
	e.handle(events...)
	if _, err := e.hooks.Ping(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.hooks.Redeliver(ctx, w.ID, events[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.hooks.Rotate(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	rotated := e.published("z")
	e.handle(rotated)
	want := len(events) + 3

	ds, err := e.store.RecentDeliveries(ctx, w.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != want {
		t.Errorf("%d deliveries in the history, want %d", len(ds), want)
	}
	for _, d := range ds {
		if d.StatusCode != http.StatusNoContent {
			t.Errorf("delivery of %s (%s): status %d, %s", d.EventID, d.EventType, d.StatusCode, d.Error)
		}
	}
	resp, err := http.Get(base + "/results")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Verified, Failed int
		Failures         []any
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.Verified != want || res.Failed != 0 {
		t.Errorf("standardwebhooks verified %d and refused %d of %d deliveries: %v", res.Verified, res.Failed, want, res.Failures)
	}
}

package webhooks_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// TestDeliveriesReachPublicAddressesOnly resolves a public-looking name
// to addresses off the public internet: without the unsafe option no
// connection is made, whatever the name, and the history says why.
func TestDeliveriesReachPublicAddressesOnly(t *testing.T) {
	for _, addr := range []string{
		"127.0.0.1", "::1", "::ffff:127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"fe80::1", "fc00::1", "100.64.0.1", "0.0.0.0", "::", "224.0.0.1", "::ffff:169.254.169.254",
		"192.0.2.1", "198.51.100.1", "203.0.113.1", "192.88.99.1", "64:ff9b:1::a00:1", "fec0::1", "64:ff9b::7f00:1",
		"2002:7f00:1::1", "2001:db8::1", "3fff::1", "100::1",
	} {
		t.Run(addr, func(t *testing.T) {
			e := newEnv(t)
			r := newReceiver(t)
			port := strings.TrimPrefix(r.URL, "http://127.0.0.1:")
			resolved := netip.MustParseAddr(addr)
			guarded := e.service(func(o *webhooks.Options) {
				o.AllowHTTP = true
				o.Resolve = func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{resolved}, nil }
			})
			w, _ := e.create("http://hooks.example.com:"+port+"/in", storage.EventPostPublished)
			e.hooks = guarded
			e.handle(e.published("a"))
			if n := len(r.deliveries()); n != 0 {
				t.Fatalf("the endpoint at %s got %d requests", addr, n)
			}
			ds, err := e.store.RecentDeliveries(context.Background(), w.ID, 1)
			if err != nil || len(ds) != 1 || ds[0].Error != webhooks.ErrForbiddenAddress.Error() || ds[0].StatusCode != 0 {
				t.Errorf("history = %+v, %v; want the refusal", ds, err)
			}
		})
	}
}

// TestTheUnsafeOptionReachesLoopback is the same delivery with
// AllowPrivate: the receiver gets it.
func TestTheUnsafeOptionReachesLoopback(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	port := strings.TrimPrefix(r.URL, "http://127.0.0.1:")
	e.hooks = e.service(func(o *webhooks.Options) {
		o.AllowHTTP, o.AllowPrivate = true, true
		o.Resolve = func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
	})
	e.create("http://hooks.example.com:"+port+"/in", storage.EventPostPublished)
	e.handle(e.published("a"))
	if n := len(r.deliveries()); n != 1 {
		t.Fatalf("%d deliveries, want 1", n)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	e := newEnv(t)
	target := newReceiver(t)
	r := newReceiver(t)
	r.answerWith(func(w http.ResponseWriter) {
		w.Header().Set("Location", target.URL)
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	w, _ := e.create(r.URL, storage.EventPostPublished)
	e.handle(e.published("a"))
	if n := len(target.deliveries()); n != 0 {
		t.Fatalf("the redirect was followed: its target got %d requests", n)
	}
	ds, err := e.store.RecentDeliveries(context.Background(), w.ID, 1)
	if err != nil || len(ds) != 1 || ds[0].StatusCode != http.StatusTemporaryRedirect || ds[0].NextAttemptAt.IsZero() {
		t.Errorf("history = %+v, %v; want a 307 that is retried", ds, err)
	}
}

func TestBadURLsAreRefusedAndWriteNothing(t *testing.T) {
	e := newEnv(t)
	strict := e.service()
	ctx := context.Background()
	long := "https://hooks.example.com/" + strings.Repeat("a", storage.MaxWebhookURLLength)
	for _, u := range []string{
		"", "hooks.example.com/in", "/in", "ftp://hooks.example.com/", "javascript:alert(1)",
		"https://user:pass@hooks.example.com/", "https://hooks.example.com/#frag", long,
		"http://hooks.example.com/", "https://127.0.0.1/", "https://localhost/", "https://[::1]/",
		"https://169.254.169.254/latest/meta-data", "https://10.0.0.1/", "https://[::ffff:127.0.0.1]/",
		"https://2130706433/", "https://100.64.0.1/", "https://[fe80::1]/", "https://0.0.0.0/",
	} {
		_, _, err := strict.Create(ctx, storage.WebhookInput{URL: &u, Events: []storage.EventType{storage.EventPostPublished}})
		if ve, ok := errors.AsType[*storage.ValidationError](err); !ok || ve.Field != "url" {
			t.Errorf("Create(%q) = %v, want a ValidationError on url", u, err)
		}
	}
	good := "https://hooks.example.com/in"
	for _, events := range [][]storage.EventType{nil, {}, {"post.scheduled"}, {"comment.pending"}, {"nope"}} {
		if _, _, err := strict.Create(ctx, storage.WebhookInput{URL: &good, Events: events}); err == nil {
			t.Errorf("Create with events %v succeeded", events)
		}
	}
	if hooks, err := e.store.Webhooks(ctx); err != nil || len(hooks) != 0 {
		t.Errorf("webhooks = %d, %v; want none written", len(hooks), err)
	}
	e.consistent()
}

func TestAHundredWebhooksAtMost(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := range storage.MaxWebhooks {
		e.create("https://hooks.example.com/"+strings.Repeat("x", i+1), storage.EventPostPublished)
	}
	u := "https://hooks.example.com/one-more"
	_, _, err := e.hooks.Create(ctx, storage.WebhookInput{URL: &u, Events: []storage.EventType{storage.EventPostPublished}})
	if _, ok := errors.AsType[*storage.ValidationError](err); !ok {
		t.Fatalf("the 101st webhook: %v, want a ValidationError", err)
	}
	hooks, err := e.store.Webhooks(ctx)
	if err != nil || len(hooks) != storage.MaxWebhooks {
		t.Fatalf("%d webhooks, %v", len(hooks), err)
	}
	if err := e.store.DeleteWebhook(ctx, hooks[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.hooks.Create(ctx, storage.WebhookInput{URL: &u, Events: []storage.EventType{storage.EventPostPublished}}); err != nil {
		t.Fatalf("a webhook after one was deleted: %v", err)
	}
	e.consistent()
}

func TestEventTypesFitTheirBound(t *testing.T) {
	for _, e := range append(slices.Clone(storage.PublicEvents), webhooks.EventPing) {
		if len(e) > webhooks.MaxEventTypeBytes {
			t.Errorf("%s is longer than MaxEventTypeBytes", e)
		}
	}
}

// TestLocalhostIsRefusedThroughTheSystemResolver delivers to a name the
// system resolves to loopback (localhost, from the hosts file), with no
// resolver of the test's: the dialer refuses the address it resolved.
func TestLocalhostIsRefusedThroughTheSystemResolver(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	port := strings.TrimPrefix(r.URL, "http://127.0.0.1:")
	w, _ := e.create("http://localhost:"+port+"/in", storage.EventPostPublished)
	e.hooks = e.service(func(o *webhooks.Options) { o.AllowHTTP = true })
	e.handle(e.published("a"))
	if n := len(r.deliveries()); n != 0 {
		t.Fatalf("the endpoint on loopback got %d requests", n)
	}
	ds, err := e.store.RecentDeliveries(context.Background(), w.ID, 1)
	if err != nil || len(ds) != 1 || ds[0].Error != webhooks.ErrForbiddenAddress.Error() {
		t.Errorf("history = %+v, %v; want the refusal", ds, err)
	}
}

// TestPingSaysTheSameOfANameThatDoesNotResolve pings a webhook whose name
// does not resolve and one whose name resolves to a private address: both
// attempts say the same, so an admin cannot map the server's internal
// names with pingWebhook.
func TestPingSaysTheSameOfANameThatDoesNotResolve(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	internal, _ := e.create("http://internal.example.com/in", storage.EventPostPublished)
	missing, _ := e.create("http://missing.example.com/in", storage.EventPostPublished)
	e.hooks = e.service(func(o *webhooks.Options) {
		o.AllowHTTP = true
		o.Resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == "internal.example.com" {
				return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
	})
	var said []string
	for _, w := range []*storage.Webhook{internal, missing} {
		d, err := e.hooks.Ping(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		said = append(said, d.Error)
	}
	if said[0] != said[1] || said[0] != webhooks.ErrForbiddenAddress.Error() {
		t.Errorf("ping of a private name says %q, of a missing one %q; want both %q", said[0], said[1], webhooks.ErrForbiddenAddress)
	}
}

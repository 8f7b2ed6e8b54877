package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestHostMovedIsServedAsItNowIs: a host the server holds for its
// publication (routing.DefaultHostTTL, minutes) is served as the other
// publication's once the host is moved to it, and 404 once removed: the
// server's change feed drops what it holds, not the TTL.
func TestHostMovedIsServedAsItNowIs(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false"},
		map[string]string{"JWT_SECRET": platformSecret})
	defer stop()
	ops := platformToken(t, "platform", "ops")
	mutate := func(query string) string {
		t.Helper()
		code, body := graphQLAt(t, base, "", query, ops)
		if code != http.StatusOK || errorCode(body) != "" {
			t.Fatalf("%s = %d %s", query, code, body)
		}
		return body
	}
	create := func(slug, title, hosts string) string {
		var out struct {
			Data struct {
				CreatePublication struct{ Publication struct{ ID string } } `json:"createPublication"`
			}
		}
		body := mutate(fmt.Sprintf(`mutation { createPublication(input: {slug: %q, title: %q, hosts: [%s]}) { publication { id } } }`, slug, title, hosts))
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		return out.Data.CreatePublication.Publication.ID
	}
	pea := create("pea", "Pea Pod", `"pod.localhost"`)
	queue := create("queue", "Queue Notes", "")
	title := func() string {
		code, _, body := request{url: base + "/feed.xml", host: "pod.localhost"}.do(t)
		if code != http.StatusOK {
			return fmt.Sprint(code)
		}
		for _, t := range []string{"Pea Pod", "Queue Notes"} {
			if strings.Contains(body, t) {
				return t
			}
		}
		return body
	}
	if got := title(); got != "Pea Pod" {
		t.Fatalf("pod.localhost serves %q, want Pea Pod", got)
	}
	mutate(fmt.Sprintf(`mutation { removePublicationHost(input: {id: %q, host: "pod.localhost"}) { publication { id } } }`, pea))
	mutate(fmt.Sprintf(`mutation { addPublicationHost(input: {id: %q, host: "pod.localhost"}) { publication { id } } }`, queue))
	eventually(t, "pod.localhost serves Queue Notes", func() bool { return title() == "Queue Notes" }, title)
	mutate(fmt.Sprintf(`mutation { removePublicationHost(input: {id: %q, host: "pod.localhost"}) { publication { id } } }`, queue))
	eventually(t, "pod.localhost is 404", func() bool { return title() == "404" }, title)
}

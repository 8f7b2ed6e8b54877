package views

import (
	"net/http/httptest"
	"testing"
)

func TestReferrerDomainKeepsTheDomainOfAnHTTPURLOnly(t *testing.T) {
	for ref, want := range map[string]string{
		"https://news.ycombinator.com/item?id=1": "news.ycombinator.com",
		"https://WWW.Google.com/search?q=secret": "google.com",
		"http://example.org:8080/a":              "example.org",
		"https://xn--bcher-kva.example/":         "xn--bcher-kva.example",
		"":                                       "",
		"not a url":                              "",
		"javascript:alert(1)":                    "",
		"ftp://example.com/":                     "",
		"https://user:pw@example.com/":           "",
		"https://127.0.0.1/":                     "",
		"https://[::1]/":                         "",
		"https://localhost/":                     "",
		"https://bad..example/":                  "",
		"https://-bad.example/":                  "",
		"https://exa mple.com/":                  "",
		"https://ex<script>.com/":                "",
	} {
		if got := ReferrerDomain(ref); got != want {
			t.Errorf("ReferrerDomain(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestIsBotKnowsCrawlersAndHeadlessBrowsers(t *testing.T) {
	for ua, want := range map[string]bool{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36":             false,
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148": false,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0 Safari/537.36":     true,
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)":                                      true,
		"facebookexternalhit/1.1": true,
		"curl/8.0.1":              true,
		"Go-http-client/1.1":      true,
		"":                        true,
	} {
		if got := IsBot(ua); got != want {
			t.Errorf("IsBot(%q) = %v, want %v", ua, got, want)
		}
	}
}

func TestClientIPIsTheProxysLastAddressWhenConfigured(t *testing.T) {
	r := httptest.NewRequest("POST", "/v/x", nil)
	r.RemoteAddr = "10.0.0.1:5555"
	r.Header.Add("X-Forwarded-For", "1.1.1.1, 203.0.113.7")
	var none *Counter
	if got := none.ClientIP(r); got != "10.0.0.1" {
		t.Errorf("without a header: %q, want the peer", got)
	}
	c := &Counter{tally: &tally{opts: Options{ClientIPHeader: "X-Forwarded-For"}}}
	if got := c.ClientIP(r); got != "203.0.113.7" {
		t.Errorf("with X-Forwarded-For: %q, want the address the proxy appended", got)
	}
	r.Header.Set("X-Forwarded-For", "garbage")
	if got := c.ClientIP(r); got != "10.0.0.1" {
		t.Errorf("with an invalid header: %q, want the peer", got)
	}
}

func TestMemoryForgetsTheOldestHalfPastItsBound(t *testing.T) {
	m := newMemory(4)
	for h := range uint64(2) {
		m.add(h)
	}
	m.add(0)
	if m.get(0) != 2 || m.get(1) != 1 {
		t.Fatalf("remembered %d and %d, want 2 and 1", m.get(0), m.get(1))
	}
	m.add(2) // the current generation is full: 0 and 1 become the previous one
	if m.get(0) != 2 || m.get(2) != 1 {
		t.Fatalf("after a turn: %d and %d, want 2 and 1", m.get(0), m.get(2))
	}
	m.add(3)
	m.add(4) // 0 and 1 are forgotten
	if m.get(0) != 0 || m.get(1) != 0 || m.get(2) != 1 || m.get(4) != 1 {
		t.Fatalf("after two turns: %d %d %d %d, want 0 0 1 1", m.get(0), m.get(1), m.get(2), m.get(4))
	}
	if n := len(m.cur) + len(m.prev); n > 4 {
		t.Fatalf("%d remembered, bound 4", n)
	}
}

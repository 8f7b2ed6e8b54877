package tests

import (
	"context"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// badLinks are URLs a post's cover image, canonical URL and Open Graph
// image may not be: ones that do not read back as themselves, that carry
// characters which end an HTML attribute or turn text around, and ones
// whose host is not on the public internet, in the spellings browsers
// read as the same address.
var badLinks = map[string]string{
	"a quote":                          `https://example.com/a".png`,
	"a quote in the query":             `https://example.com/a.png?q="onerror=alert(1)`,
	"angle brackets":                   `https://example.com/<script>`,
	"an angle bracket in the query":    `https://example.com/a.png?x=>`,
	"a backslash":                      `https://example.com\@evil.example/a.png`,
	"a right-to-left override":         "https://example.com/\u202egnp.exe",
	"a right-to-left mark":             "https://example.com/a\u200f.png",
	"a DEL":                            "https://example.com/a\x7f.png",
	"an upper-case scheme":             "HTTPS://example.com/a.png",
	"a non-ASCII path":                 "https://example.com/café.png",
	"a percent-encoded host":           "http://127%2e0%2e0%2e1/a.png",
	"the metadata service":             "http://169.254.169.254/latest/meta-data/",
	"loopback":                         "http://127.0.0.1/a.png",
	"loopback with a trailing dot":     "http://127.0.0.1.:8080/a.png",
	"IPv6 loopback":                    "http://[::1]/a.png",
	"localhost":                        "http://localhost:3000/a.png",
	"localhost with capitals":          "http://LocalHost/a.png",
	"a name under localhost":           "http://app.localhost/a.png",
	"loopback as a decimal":            "http://2130706433/a.png",
	"loopback as hex parts":            "http://0x7f.1/a.png",
	"loopback in octal":                "http://0177.0.0.1/a.png",
	"a private address":                "http://10.0.0.7/a.png",
	"a home router":                    "http://192.168.1.1/a.png",
	"a private range of 172":           "http://172.16.0.1/a.png",
	"carrier-grade NAT":                "http://100.64.0.1/a.png",
	"the unspecified address":          "http://0.0.0.0/a.png",
	"IPv6 unspecified":                 "http://[::]/a.png",
	"a unique local IPv6":              "http://[fd00::1]/a.png",
	"a link-local IPv6":                "http://[fe80::1]/a.png",
	"IPv4-mapped loopback":             "http://[::ffff:127.0.0.1]/a.png",
	"IPv4-mapped metadata service":     "http://[::ffff:a9fe:a9fe]/a.png",
	"NAT64 of loopback":                "http://[64:ff9b::7f00:1]/a.png",
	"a name a browser reads as a host": "http://example.0x7f/a.png",
	"a port past 65535":                "https://example.com:99999/a.png",
	"a port with a leading zero":       "https://example.com:0443/a.png",
	"a colon without a port":           "https://example.com:/a.png",
}

// goodLinks are kept as they were sent.
var goodLinks = []string{
	"https://example.com/a.png?w=1&h=2#top",
	"https://cdn.example.com/%E2%82%AC/cover.png",
	"http://8.8.8.8/a.png",
	"https://[2606:4700:4700::1111]/a.png",
	"https://example.com:8443/a.png",
	"https://xn--caf-dma.example/a.png",
	"https://127.example.com/a.png",
}

// TestPostLinksAreSafeToServe sends createPost and updatePost with each
// bad link as the cover image, canonical URL and Open Graph image: each is
// BAD_USER_INPUT naming the field, before any DynamoDB request, and the
// table is unchanged. Good links are stored and read back as sent.
func TestPostLinksAreSafeToServe(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"}))
	writer := s.as("ada", auth.RoleAuthor)
	post := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: "T", Slug: "t"})).CreatePost.Post
	before := s.snapshot()

	fields := map[string]func(link string) (*ImageInput, *SeoInput){
		"coverImage.url":   func(l string) (*ImageInput, *SeoInput) { return &ImageInput{Url: l}, nil },
		"seo.canonicalUrl": func(l string) (*ImageInput, *SeoInput) { return nil, &SeoInput{CanonicalUrl: &l} },
		"seo.ogImage":      func(l string) (*ImageInput, *SeoInput) { return nil, &SeoInput{OgImage: &l} },
	}
	var cases []badInput
	for name, link := range badLinks {
		for field, in := range fields {
			cover, seo := in(link)
			cases = append(cases,
				badInput{"createPost " + field + " " + name, func() error {
					_, err := CreatePost(ctx, writer, CreatePostInput{Title: "T", Slug: "new", CoverImage: cover, Seo: seo})
					return err
				}, field},
				badInput{"updatePost " + field + " " + name, func() error {
					_, err := UpdatePost(ctx, writer, UpdatePostInput{Id: post.Id, ExpectedVersion: post.Version, CoverImage: cover, Seo: seo})
					return err
				}, field},
			)
		}
	}
	s.refusesBadInput(t, cases)
	s.unchanged(before)

	t.Run("good links are kept as sent", func(t *testing.T) {
		version := post.Version
		for _, link := range goodLinks {
			p := ok[*UpdatePostResponse](t)(UpdatePost(ctx, writer, UpdatePostInput{Id: post.Id, ExpectedVersion: version,
				CoverImage: &ImageInput{Url: link}, Seo: &SeoInput{CanonicalUrl: &link, OgImage: &link}})).UpdatePost.Post
			version = p.Version
			equal(t, "cover", p.CoverImage.Url, link)
			read := ok[*PostContentResponse](t)(PostContent(ctx, writer, post.Slug)).Post
			equal(t, "canonical", *read.Seo.CanonicalUrl, link)
			equal(t, "ogImage", *read.Seo.OgImage, link)
		}
	})
}

// TestPrivateHostsCanBeAllowed serves a store made WithPrivateHosts, as
// -allow-private-urls does for development: links to localhost and
// private addresses are kept; the other rules still hold.
func TestPrivateHostsCanBeAllowed(t *testing.T) {
	s := newServer(t)
	dev := &server{t: t, db: s.db, table: s.table, clock: s.clock, opts: s.opts,
		store: storage.New(s.db, s.table, storage.WithClock(s.clock.Now), storage.WithPrivateHosts())}
	dev.serve()
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, dev.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"}))
	writer := dev.as("ada", auth.RoleAuthor)
	for i, link := range []string{"http://localhost:3000/a.png", "http://127.0.0.1/a.png", "http://[::1]/a.png", "http://192.168.1.10/a.png"} {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: "T", Slug: "dev-" + string(rune('a'+i)),
			CoverImage: &ImageInput{Url: link}})).CreatePost.Post
		equal(t, "cover", p.CoverImage.Url, link)
	}
	_, err := CreatePost(ctx, writer, CreatePostInput{Title: "T", Slug: "quoted", CoverImage: &ImageInput{Url: `http://localhost/a".png`}})
	equal(t, "code", code(err), "BAD_USER_INPUT")
	equal(t, "field", errField(err), "coverImage.url")
}

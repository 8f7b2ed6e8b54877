package tests

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The sitemap's hreflang alternates checked against the schemas search
// engines publish: sitemaps.org's sitemap.xsd 0.9, whose <url> takes
// elements of other namespaces strictly, and the W3C's XHTML 1.0 Strict
// schema, which declares the link element that xhtml:link is (with the
// xml.xsd it imports). testdata/sitemap-schemas holds them as published,
// with wrapper.xsd loading all three, so xmllint validates each
// xhtml:link rather than letting it through.

// validateSitemap returns what xmllint reports of body against the
// sitemap and XHTML schemas, "" when it validates. The test fails when
// xmllint is missing in CI (which installs it) and is skipped elsewhere.
func validateSitemap(t *testing.T, body string) string {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI installs xmllint (Debian's libxml2-utils) before the tests: %v", err)
		}
		t.Skip("xmllint not found: install Debian's libxml2-utils to validate sitemaps")
	}
	schema, err := filepath.Abs(filepath.Join("testdata", "sitemap-schemas", "wrapper.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(xmllint, "--noout", "--nonet", "--schema", schema, "-")
	cmd.Stdin = strings.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if _, failed := err.(*exec.ExitError); failed {
		return stderr.String()
	}
	if err != nil {
		t.Fatalf("run xmllint: %v", err)
	}
	return ""
}

// TestSitemapAlternatesValidate serves the month's sitemap of posts and
// the static pages' sitemap, both with translations as xhtml:link
// alternates, and validates them against the sitemap and XHTML schemas;
// the same sitemaps with an alternate broken (an element XHTML does not
// have, an hreflang that is no language code) fail, so the check sees
// into the alternates.
func TestSitemapAlternatesValidate(t *testing.T) {
	s := newServer(t)
	w := s.seedBlog(t).writers[0]
	var posts []string
	for _, loc := range []string{"en", "de-DE", "pt-BR"} {
		var made struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		in := map[string]any{"title": "Post " + loc, "body": "Text", "locale": loc}
		if err := raw(t, w, `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id } } }`, map[string]any{"in": in}, &made); err != nil {
			t.Fatal(err)
		}
		posts = append(posts, made.CreatePost.Post.ID)
		if err := raw(t, w, `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id } } }`, map[string]any{"id": posts[len(posts)-1]}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range posts[1:] {
		if err := raw(t, w, `mutation($a: ID!, $b: ID!) { linkTranslation(input: {postId: $a, translationId: $b}) { post { id } } }`,
			map[string]any{"a": posts[0], "b": other}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	pages := s.localePages(t, "en", "fr", "zh-Hant")
	for _, other := range pages[1:] {
		if err := raw(t, s.admin, linkPages, map[string]any{"a": pages[0], "b": other}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}

	feeds := newSyndicationServer(t, s)
	for _, path := range []string{"/sitemap.xml?section=posts&month=" + s.clock.Now().Format("2006-01"), "/sitemap.xml?section=static"} {
		a, _ := feeds.get(t, path)
		equal(t, "status of "+path, a.status, http.StatusOK)
		equal(t, path+" has 3 alternates in pt-BR or zh-Hant", strings.Count(a.body, `hreflang="pt-BR"`)+strings.Count(a.body, `hreflang="zh-Hant"`), 3)
		if report := validateSitemap(t, a.body); report != "" {
			t.Errorf("%s does not validate against the sitemap and XHTML schemas:\n%s", path, report)
		}
		for name, broken := range map[string]string{
			"an element XHTML does not have": strings.Replace(a.body, "<xhtml:link ", "<xhtml:alternate ", 1),
			"an hreflang of no language":     strings.Replace(a.body, `hreflang="en"`, `hreflang="en US"`, 1),
			"an alternate before the loc":    strings.Replace(a.body, "<loc>", `<xhtml:link rel="alternate" hreflang="en" href="https://example.com/"/><loc>`, 1),
		} {
			equal(t, "the change makes "+name, broken != a.body, true)
			if validateSitemap(t, broken) == "" {
				t.Errorf("%s with %s validates", path, name)
			}
		}
	}
}

package main

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage"
)

// TestMediaRoutes starts the server with the embedded media store and
// checks its routes as a browser meets them: a page of an allowed origin
// may send uploads to /s3/ (its preflight is answered), a page of another
// may not, the store answers nothing else, and renditions of no media
// item are 404.
func TestMediaRoutes(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-host", "127.0.0.1"},
		map[string]string{"CORS_ORIGINS": "https://app.example.com"})
	defer stop()
	upload := base + "/s3/media/uploads/01a22642-734f-7f0e-bece-dc9144b75e3b"
	preflight := func(origin string) (int, http.Header) {
		code, h, _ := request{method: http.MethodOptions, url: upload, headers: []string{"Origin: " + origin,
			"Access-Control-Request-Method: PUT", "Access-Control-Request-Headers: content-type"}}.do(t)
		return code, h
	}
	code, h := preflight("https://app.example.com")
	if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://app.example.com" || h.Get("Access-Control-Allow-Methods") != "PUT" {
		t.Errorf("preflight of an allowed origin: %d, %v", code, h)
	}
	code, h = preflight("https://evil.example")
	if code == http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of another origin: %d, %v", code, h)
	}
	for _, r := range []request{
		{method: http.MethodGet, url: base + "/s3/media/"},
		{method: http.MethodGet, url: upload},
		{method: http.MethodPut, url: upload, body: "unsigned", headers: []string{"Content-Type: image/png"}},
		{method: http.MethodDelete, url: upload},
	} {
		if code, _, _ := r.do(t); code != http.StatusForbidden {
			t.Errorf("%s %s: %d, want 403", r.method, r.url, code)
		}
	}
	if code, _, _ := (request{url: base + "/media/01a22642-734f-7f0e-bece-dc9144b75e3b/640.webp"}).do(t); code != http.StatusNotFound {
		t.Errorf("rendition of no item: %d, want 404", code)
	}
}

// TestMediaRecountCommand runs "blog media recount" on a migrated table:
// it recounts the default publication's empty library, and refuses an
// unknown subcommand.
func TestMediaRecountCommand(t *testing.T) {
	dir := t.TempDir()
	withTable(t, dir, func(ctx context.Context, client *dynamodb.Client) {
		store := storage.New(client, "blog")
		if err := store.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	})
	var out bytes.Buffer
	env := func(string) string { return "" }
	if err := runMedia(context.Background(), []string{"recount", "-data", dir}, env, &out); err != nil {
		t.Fatalf("recount: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), `publication "default": 0 files, 0 bytes`) {
		t.Errorf("recount printed %q", out.String())
	}
	if err := runMedia(context.Background(), []string{"resize"}, env, &out); err == nil {
		t.Error("an unknown subcommand was run")
	}
}

// TestMediaRecountCommandOfOnePublication: "blog media recount
// -publication" recounts only the publication it names, by slug or id
// (the default one by its id), and refuses one no publication has;
// without it every publication is recounted.
func TestMediaRecountCommandOfOnePublication(t *testing.T) {
	dir := t.TempDir()
	var beta string
	withTable(t, dir, func(ctx context.Context, client *dynamodb.Client) {
		store := storage.New(client, "blog")
		if err := store.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		p, err := store.CreatePublication(ctx, storage.NewPublication{Slug: "beta", Title: "Beta"})
		if err != nil {
			t.Fatal(err)
		}
		beta = p.ID
	})
	env := func(string) string { return "" }
	recount := func(args ...string) ([]string, error) {
		var out bytes.Buffer
		err := runMedia(context.Background(), append([]string{"recount", "-data", dir}, args...), env, &out)
		var pubs []string
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if pub, _, ok := strings.Cut(strings.TrimPrefix(line, "publication "), ":"); ok {
				pubs = append(pubs, strings.Trim(pub, `"`))
			}
		}
		return pubs, err
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"every publication", nil, []string{"default", beta}},
		{"by slug", []string{"-publication", "beta"}, []string{beta}},
		{"by id", []string{"-publication=" + beta}, []string{beta}},
		{"the default one", []string{"--publication", "default"}, []string{"default"}},
	} {
		got, err := recount(c.args...)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: recounted %v (%v), want %v", c.name, got, err, c.want)
		}
	}
	for _, args := range [][]string{{"-publication", "nowhere"}, {"-publication"}, {"-publication", "beta", "-publication", "default"}} {
		if got, err := recount(args...); err == nil || len(got) > 0 {
			t.Errorf("%v: recounted %v (%v), want an error and nothing recounted", args, got, err)
		}
	}
}

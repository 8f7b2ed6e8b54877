package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// TestViewOfAnotherPublicationsPostWritesNothing: recordView on
// publication B (Field Notes) with the id of a post of A answers as for a
// missing post, and once the server has stopped (flushing every view it
// counted) no item of B's names that id, while B's own post viewed the
// same way has its views written.
func TestViewOfAnotherPublicationsPostWritesNothing(t *testing.T) {
	if dynamotest.Endpoint(t) != "" {
		t.Skip("reads the embedded engine's data file after the server stopped")
	}
	args, env, _ := platformBackend(t)
	base, _, stop := startServer(t, args, env)
	defer stop()
	notes := "notes.localhost:" + port(t, base)
	postA, postB := firstPost(t, base, "localhost"), firstPost(t, base, notes)
	const ua = "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
	view := func(id string) string {
		_, body := graphQLAt(t, base, notes, fmt.Sprintf(`mutation { recordView(input: {postId: %q}) { counted } }`, id), ua)
		return body
	}
	missing := view(base64.RawURLEncoding.EncodeToString([]byte("Post:01a00000-0000-7000-8000-000000000000")))
	if got := view(postA); got != missing || !strings.Contains(got, `"counted":false`) {
		t.Errorf("recordView of A's post on B = %s, want as for a missing post: %s", got, missing)
	}
	if got := view(postB); !strings.Contains(got, `"counted":true`) {
		t.Fatalf("recordView of B's post on B = %s, want counted", got)
	}
	stop()

	engine, err := embedded.Open(embedded.Options{Path: filepath.Join(env["DATA_DIR"], dataFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	client, err := storage.NewClient(context.Background(), storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: engine}})
	if err != nil {
		t.Fatal(err)
	}
	rawA, rawB := rawPostID(t, postA), rawPostID(t, postB)
	var viewsOfB bool
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: aws.String("blog")})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var k struct{ PK, SK, Type string }
			if err := attributevalue.UnmarshalMap(it, &k); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(k.PK, "PUB#default#") || !strings.HasPrefix(k.PK, "PUB#") {
				continue
			}
			if strings.Contains(k.PK+k.SK, rawA) {
				t.Errorf("B holds an item naming A's post: %s %s (%s)", k.PK, k.SK, k.Type)
			}
			viewsOfB = viewsOfB || (strings.Contains(k.PK, rawB) && k.Type == "postViews")
		}
	}
	if !viewsOfB {
		t.Error("B's own post has no views item: the views were not flushed")
	}
}

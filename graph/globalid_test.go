package graph

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/blogql/blog/storage"
)

func TestGlobalIDRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		id   string
		want globalID
	}{
		{"post", postGID("0190a1b2-post"), globalID{kind: kindPost, id: "0190a1b2-post"}},
		{"author with a colon in its id", authorGID("ann:1"), globalID{kind: kindAuthor, id: "ann:1"}},
		{"category", categoryGID("go"), globalID{kind: kindCategory, id: "go"}},
		{"comment", commentGID("p1", "1700000000000-ab.1700000000001-cd"), globalID{kind: kindComment, post: "p1", id: "1700000000000-ab.1700000000001-cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeID("id", tt.id)
			if err != nil {
				t.Fatalf("decodeID(%q): %v", tt.id, err)
			}
			if got != tt.want {
				t.Errorf("decodeID(%q) = %+v, want %+v", tt.id, got, tt.want)
			}
		})
	}
}

func TestGlobalIDIsOpaque(t *testing.T) {
	id := postGID("p1")
	if strings.Contains(id, "p1") || strings.Contains(id, "Post") {
		t.Errorf("postGID(p1) = %q shows its parts", id)
	}
}

func TestDecodeIDRejectsForeignInput(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name string
		id   string
	}{
		{"empty", ""},
		{"not base64", "%%%"},
		{"padded base64", base64.URLEncoding.EncodeToString([]byte("Post:p1"))},
		{"raw id", "p1"},
		{"unknown type", b64("User:u1")},
		{"no separator", b64("Post")},
		{"empty key", b64("Post:")},
		{"comment without post", b64("Comment::c1")},
		{"comment without comment id", b64("Comment:p1:")},
		{"comment with one part", b64("Comment:c1")},
		{"too long", b64("Post:" + strings.Repeat("x", maxGlobalIDLen))},
		{"tampered", postGID("p1")[:3] + "!" + postGID("p1")[4:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeID("id", tt.id)
			assertValidation(t, err, "id")
		})
	}
}

func TestDecodeIDOfRejectsOtherKinds(t *testing.T) {
	if _, err := decodeIDOf("authorId", postGID("p1"), kindAuthor); err == nil {
		t.Fatal("a Post id was accepted as an Author id")
	} else {
		assertValidation(t, err, "authorId")
	}
	if _, err := decodeCommentID("parentId", postGID("p1")); err == nil {
		t.Fatal("a Post id was accepted as a Comment id")
	} else {
		assertValidation(t, err, "parentId")
	}
	got, err := decodeCommentID("parentId", commentGID("p1", "c1"))
	if err != nil || got != (storage.CommentKey{PostID: "p1", CommentID: "c1"}) {
		t.Errorf("decodeCommentID = %+v, %v", got, err)
	}
}

func assertValidation(t *testing.T, err error, field string) {
	t.Helper()
	ve, ok := errors.AsType[*storage.ValidationError](err)
	if !ok {
		t.Fatalf("err = %v, want a *storage.ValidationError", err)
	}
	if ve.Field != field {
		t.Errorf("field = %q, want %q", ve.Field, field)
	}
}

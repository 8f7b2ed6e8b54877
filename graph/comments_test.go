package graph

import (
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// TestWhoWroteAComment checks which tokens count as a comment's writer:
// an author's comment needs a token that may act as that author, a
// reader's the reader's subject, whatever the token's role.
func TestWhoWroteAComment(t *testing.T) {
	byAuthor := &storage.Comment{AuthorID: "ada"}
	byReader := &storage.Comment{ReaderID: "auth0|lin"}
	tests := []struct {
		name   string
		actor  auth.Actor
		author bool // writes byAuthor
		reader bool // writes byReader
	}{
		{"the anonymous", auth.Actor{}, false, false},
		{"the author", auth.Actor{ID: "ada", Roles: []string{auth.RoleAuthor}}, true, false},
		{"the author's subject with the reader role", auth.Actor{ID: "ada", Roles: []string{auth.RoleReader}}, false, false},
		{"the reader", auth.Actor{ID: "auth0|lin", Roles: []string{auth.RoleReader}}, false, true},
		{"the reader's subject without a role", auth.Actor{ID: "auth0|lin"}, false, true},
		{"another reader", auth.Actor{ID: "auth0|rosa", Roles: []string{auth.RoleReader}}, false, false},
		{"an admin of another subject", auth.Actor{ID: "root", Roles: []string{auth.RoleAdmin}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := writes(tt.actor, byAuthor); got != tt.author {
				t.Errorf("writes the author's comment = %v, want %v", got, tt.author)
			}
			if got := writes(tt.actor, byReader); got != tt.reader {
				t.Errorf("writes the reader's comment = %v, want %v", got, tt.reader)
			}
		})
	}

	t.Run("who a new comment is written by", func(t *testing.T) {
		r := &Resolver{readers: storage.ReaderRules{Hold: true, PerMinute: 5}}
		var in storage.NewComment
		r.writer(auth.Actor{ID: "ada", Roles: []string{auth.RoleAuthor}, Name: "Ada"}, &in)
		if in.AuthorID != "ada" || in.Reader.ID != "ada" || in.Rules != r.readers {
			t.Errorf("an author's comment = %+v, want author ada, reader ada as the fallback, the readers' rules", in)
		}
		in = storage.NewComment{}
		r.writer(auth.Actor{ID: "auth0|lin", Roles: []string{auth.RoleReader}, Name: "Lin", Picture: "https://id.example.com/lin.png"}, &in)
		if in.AuthorID != "" || *in.Reader != (storage.ReaderProfile{ID: "auth0|lin", Name: "Lin", AvatarURL: "https://id.example.com/lin.png"}) {
			t.Errorf("a reader's comment = %+v", in)
		}
		in = storage.NewComment{}
		r.writer(auth.Actor{ID: "root", Roles: []string{auth.RoleAdmin}}, &in)
		if in.Rules != (storage.ReaderRules{Unchecked: true}) {
			t.Errorf("an admin's rules = %+v, want neither held nor limited", in.Rules)
		}
	})
}

package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// What an object writes is what its selection asks for in this
// operation: fields under @include and @skip with the operation's
// variables, fragments on the object's type and on an interface it
// implements, the same field twice, and the same type selected apart
// under another alias, in the order they are first asked for.
func TestSelectionsFollowDirectivesAndFragments(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	const query = `query($full: Boolean!) {
  category(slug: "go") {
    posts(first: 2) { edges { node {
      ... on Node { id }
      title @include(if: $full)
      ... on Post { slug author { name } }
      slug @skip(if: $full)
      categories { slug ... on Category { name @include(if: $full) } }
      id
    } } }
  }
  other: category(slug: "go") { posts(first: 1) { edges { node { slug ... on Node { id } } } } }
}`
	type edges struct {
		Posts struct {
			Edges []struct{ Node json.RawMessage }
		}
	}
	for _, c := range []struct {
		full                  string
		node, category, other []string
	}{
		{"true", []string{"id", "title", "slug", "author", "categories"}, []string{"slug", "name"}, []string{"slug", "id"}},
		{"false", []string{"id", "slug", "author", "categories"}, []string{"slug"}, []string{"slug", "id"}},
	} {
		a := s.post(t, query, `{"full":`+c.full+`}`, nil)
		var got struct {
			Data struct{ Category, Other edges }
		}
		if err := json.Unmarshal([]byte(a.body), &got); err != nil {
			t.Fatal(err)
		}
		nodes := got.Data.Category.Posts.Edges
		equal(t, "posts", len(nodes), 2)
		for _, e := range nodes {
			equal(t, "node's fields, full "+c.full, fmt.Sprint(objectKeys(t, e.Node)), fmt.Sprint(c.node))
			var node struct{ Categories []json.RawMessage }
			if err := json.Unmarshal(e.Node, &node); err != nil {
				t.Fatal(err)
			}
			for _, cat := range node.Categories {
				equal(t, "category's fields, full "+c.full, fmt.Sprint(objectKeys(t, cat)), fmt.Sprint(c.category))
			}
		}
		other := got.Data.Other.Posts.Edges
		equal(t, "other alias's posts", len(other), 1)
		equal(t, "other alias's fields", fmt.Sprint(objectKeys(t, other[0].Node)), fmt.Sprint(c.other))
	}
}

// objectKeys returns the keys of the JSON object raw, in order.
func objectKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

package tests

import (
	"context"
	"fmt"

	graphpkg "github.com/blogql/blog/graph"
)

// The mixed workload's co-author and tag calls: posts made and edited
// with co-authors and tags from a small pool (so tags are shared and
// made concurrently), co-authors changed, and tags renamed by admins.

// mixTagNames are the tags the workload's posts get: "go" and "Go!"
// name one tag, so two names make it at once.
var mixTagNames = []string{"Go", "go!", "AWS", "DynamoDB", "Testing", "Single table"}

// tags returns up to three tag names of the pool.
func (c *mixClient) tags() []string {
	var out []string
	for range c.rng.IntN(4) {
		out = append(out, mixTagNames[c.rng.IntN(len(mixTagNames))])
	}
	return out
}

// coAuthors returns the global ids of up to two other authors than
// owner.
func (c *mixClient) coAuthors(owner string) []string {
	var out []string
	for range c.rng.IntN(3) {
		u := c.m.users[c.rng.IntN(len(c.m.users))]
		if u.id != owner {
			out = append(out, u.gid)
		}
	}
	return out
}

// coAuthorsAndTags makes half the posts nextCreatePost makes
// co-authored and tagged.
func (c *mixClient) coAuthorsAndTags(in *CreatePostInput) {
	if c.rng.IntN(2) == 0 {
		in.CoAuthors, in.Tags = c.coAuthors(c.user.id), c.tags()
	}
}

// nextUpdatePostCoAuthors changes a post's co-authors: only its primary
// author and admins may.
func nextUpdatePostCoAuthors(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := UpdatePostInput{Id: p.gid, ExpectedVersion: p.version, CoAuthors: c.coAuthors(p.owner)}
	if in.CoAuthors == nil {
		in.CoAuthors = []string{}
	}
	refusals := c.postRefusals(p, graphpkg.CodeConflict, graphpkg.CodeForbidden)
	return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := UpdatePost(ctx, c.user.client, in)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		m.setVersion(p.gid, r.UpdatePost.Post.Version)
		return postResult(r.UpdatePost.Post.PostSummary, r.UpdatePost.Post.Version), nil
	}}
}

// nextUpdatePostTags changes a post's tags.
func nextUpdatePostTags(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := UpdatePostInput{Id: p.gid, ExpectedVersion: p.version, Tags: c.tags()}
	if in.Tags == nil {
		in.Tags = []string{}
	}
	return &mixCall{refusals: c.postRefusals(p, graphpkg.CodeConflict), flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := UpdatePost(ctx, c.user.client, in)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		m.setVersion(p.gid, r.UpdatePost.Post.Version)
		return postResult(r.UpdatePost.Post.PostSummary, r.UpdatePost.Post.Version), nil
	}}
}

// nextRenameTag renames a tag of the pool: admins only; one nobody gave
// a post yet is NOT_FOUND.
func nextRenameTag(c *mixClient) *mixCall {
	slugs := []string{"go", "aws", "dynamodb", "testing", "single-table"}
	slug := slugs[c.rng.IntN(len(slugs))]
	refusals := []string{graphpkg.CodeNotFound}
	if !c.user.admin {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	name := fmt.Sprintf("%s %s", slug, c.tag())
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		r, err := RenameTag(ctx, c.user.client, RenameTagInput{Slug: slug, Name: name, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %q", r.RenameTag.Tag.Slug, r.RenameTag.Tag.Name), nil
	}}
}

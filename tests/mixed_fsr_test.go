package tests

import (
	"context"
	"fmt"

	graphpkg "github.com/blogql/blog/graph"
)

// The mixed workload's generators of featured posts, series and revisions
// calls. Series are three, mix-0 to mix-2, made by whoever comes first;
// their calls take no idempotency key.

// mixSeries returns one of the mix's series' slugs.
func (c *mixClient) mixSeries() string { return fmt.Sprintf("mix-%d", c.rng.IntN(3)) }

// seriesRefusals are what a series call may meet: a series not made yet
// or a post gone (NOT_FOUND), someone else's series or post (FORBIDDEN),
// a post in another series or none (BAD_USER_INPUT).
var seriesRefusals = []string{graphpkg.CodeNotFound, graphpkg.CodeForbidden, graphpkg.CodeBadUserInput}

func nextSetFeatured(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := SetPostFeaturedInput{Id: p.gid, Featured: c.rng.IntN(3) > 0}
	refusals := c.postRefusals(p)
	if c.rng.IntN(3) == 0 {
		in.ExpectedVersion = ptr(p.version)
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := SetPostFeatured(ctx, c.user.client, in)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		got := r.SetPostFeatured.Post
		m.setVersion(p.gid, got.Version)
		return fmt.Sprintf("%s v%d %t", got.Id, got.Version, got.Featured), nil
	}}
}

func nextCreateSeries(c *mixClient) *mixCall {
	slug := c.mixSeries()
	return &mixCall{keyless: true, refusals: []string{"CONFLICT/ALREADY_EXISTS", graphpkg.CodeForbidden}, send: func(ctx context.Context, _ *string) (string, error) {
		_, err := CreateSeries(ctx, c.user.client, CreateSeriesInput{Slug: slug, Title: "Series " + slug})
		return "", err
	}}
}

func nextSeriesPost(what string) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		p := c.post()
		if p == nil {
			return nil
		}
		slug := c.mixSeries()
		return &mixCall{keyless: true, refusals: seriesRefusals, send: func(ctx context.Context, _ *string) (string, error) {
			var err error
			switch what {
			case "add":
				var r *AddPostToSeriesResponse
				r, err = AddPostToSeries(ctx, c.user.client, AddPostToSeriesInput{SeriesSlug: slug, PostId: p.gid, Position: ptr(1 + c.rng.IntN(4))})
				if err == nil {
					m.setVersion(p.gid, r.AddPostToSeries.Post.Version)
				}
			case "remove":
				var r *RemovePostFromSeriesResponse
				r, err = RemovePostFromSeries(ctx, c.user.client, RemovePostFromSeriesInput{SeriesSlug: slug, PostId: p.gid})
				if err == nil {
					m.setVersion(p.gid, r.RemovePostFromSeries.Post.Version)
				}
			case "move":
				_, err = MoveSeriesPost(ctx, c.user.client, MoveSeriesPostInput{SeriesSlug: slug, PostId: p.gid, Position: 1 + c.rng.IntN(4)})
			}
			return "", err
		}}
	}
}

// nextRestoreRevision reads a post's revisions as the client (its author
// or an admin may) and restores the newest.
func nextRestoreRevision(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	r, err := PostRevisions(context.Background(), c.user.client, p.gid, ptr(1), nil)
	if err != nil || r.Post == nil || r.Post.Revisions == nil || len(r.Post.Revisions.Edges) == 0 {
		return nil
	}
	in := RestorePostRevisionInput{PostId: p.gid, RevisionId: r.Post.Revisions.Edges[0].Node.Id, ExpectedVersion: r.Post.Version}
	return &mixCall{refusals: c.postRefusals(p, graphpkg.CodeConflict), send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := RestorePostRevision(ctx, c.user.client, in)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		got := r.RestorePostRevision.Post
		m.setVersion(p.gid, got.Version)
		return fmt.Sprintf("%s v%d %q", got.Id, got.Version, got.Title), nil
	}}
}

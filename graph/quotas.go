package graph

import (
	"context"
	"fmt"
	"slices"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// A publication's quotas of posts and webhooks: the storage keeps the
// counters and the publication's own limits, the configuration the
// defaults.

// publicationUsage answers Publication.usage: for a platform admin, or
// an admin of the request's publication when p is it.
func (r *Resolver) publicationUsage(ctx context.Context, p *storage.Publication) (*model.PublicationUsage, error) {
	if platformAdmin(ctx) != nil {
		if err := admin(ctx); err != nil {
			return nil, err
		}
		if p.ID != r.store.Publication() {
			return nil, fmt.Errorf("%w: another publication's usage is for platform admins", auth.ErrForbidden)
		}
	}
	ps, err := r.store.In(p.ID)
	if err != nil {
		return nil, err
	}
	u, err := ps.PublicationUsage(ctx)
	if err != nil {
		return nil, err
	}
	return usageModel(u), nil
}

// setPublicationLimits answers Mutation.setPublicationLimits, for
// platform admins.
func (r *Resolver) setPublicationLimits(ctx context.Context, in model.SetPublicationLimitsInput) (*model.SetPublicationLimitsPayload, error) {
	if err := platformAdmin(ctx); err != nil {
		return nil, err
	}
	lim := storage.PublicationLimits{
		DefaultPosts:    slices.Contains(in.UseDefault, model.PublicationLimitPosts),
		DefaultWebhooks: slices.Contains(in.UseDefault, model.PublicationLimitWebhooks),
	}
	switch {
	case lim.DefaultPosts && in.Posts != nil:
		return nil, &storage.ValidationError{Field: "posts", Reason: "give a limit or take the default, not both"}
	case lim.DefaultWebhooks && in.Webhooks != nil:
		return nil, &storage.ValidationError{Field: "webhooks", Reason: "give a limit or take the default, not both"}
	}
	if in.Posts != nil {
		lim.Posts = new(int64(*in.Posts))
	}
	if in.Webhooks != nil {
		lim.Webhooks = new(int64(*in.Webhooks))
	}
	if err := r.store.SetPublicationLimits(ctx, in.ID, lim); err != nil {
		return nil, err
	}
	p, err := r.store.GetPublication(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &model.SetPublicationLimitsPayload{Publication: p}, nil
}

// usageModel maps a publication's usage to the schema's type.
func usageModel(u *storage.PublicationUsage) *model.PublicationUsage {
	out := &model.PublicationUsage{Posts: int(u.Posts), Webhooks: int(u.Webhooks)}
	if u.Limits.Posts > 0 {
		out.PostsLimit = new(int(u.Limits.Posts))
	}
	if u.Limits.Webhooks > 0 {
		out.WebhooksLimit = new(int(u.Limits.Webhooks))
	}
	return out
}

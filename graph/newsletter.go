package graph

import (
	"context"

	"github.com/blogql/blog/graph/model"
)

// The member's choice of the newsletter (storage/newsletter.go); the
// unsubscribe link is package newsletter's.

func (r *Resolver) setNewsletterSubscription(ctx context.Context, in model.SetNewsletterSubscriptionInput) (*model.SetNewsletterSubscriptionPayload, error) {
	a, err := sessionActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.store.SetNewsletter(ctx, a.ID, in.Subscribed); err != nil {
		return nil, err
	}
	return &model.SetNewsletterSubscriptionPayload{Subscribed: in.Subscribed}, nil
}

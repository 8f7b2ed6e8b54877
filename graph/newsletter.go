package graph

import (
	"context"

	"github.com/blogql/blog/graph/model"
)

// The member's choices of the newsletter (storage/newsletter.go) and of
// reply notifications (storage/replynotify.go); the unsubscribe links are
// package newsletter's.

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

func (r *Resolver) setReplyNotifications(ctx context.Context, in model.SetReplyNotificationsInput) (*model.SetReplyNotificationsPayload, error) {
	a, err := sessionActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.store.SetReplyNotifications(ctx, a.ID, in.Enabled); err != nil {
		return nil, err
	}
	return &model.SetReplyNotificationsPayload{Enabled: in.Enabled}, nil
}

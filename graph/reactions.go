package graph

import (
	"context"
	"slices"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// react answers react and unreact (undo): the signed-in caller's reaction
// to the post or comment the input names, then the subject as it is.
func (r *Resolver) react(ctx context.Context, in model.ReactionInput, undo bool) (*model.ReactionPayload, error) {
	a, err := signedIn(ctx)
	if err != nil {
		return nil, err
	}
	g, err := decodeID("subjectId", in.SubjectID)
	if err != nil {
		return nil, err
	}
	var sub storage.Subject
	switch g.kind {
	case kindPost:
		sub = storage.Subject{PostID: g.id}
	case kindComment:
		sub = storage.Subject{PostID: g.post, CommentID: g.id}
	default:
		return nil, &storage.ValidationError{Field: "subjectId", Reason: "is not a post or comment id"}
	}
	if undo {
		err = r.store.Unreact(ctx, sub, a.ID, string(in.Kind))
	} else {
		// A reader session's reader must be a member; a token of the
		// staff's key, or one the frontend signs with the reader key for
		// its own readers, vouches for the reader itself.
		err = r.store.React(ctx, sub, storage.Reactor{ID: a.ID, NeedsMember: a.Session != ""}, string(in.Kind))
	}
	if err != nil {
		return nil, err
	}
	l := loadersFor(ctx)
	out := &model.ReactionPayload{}
	if sub.CommentID == "" {
		out.Post, err = l.posts.Load(ctx, sub.PostID)()
	} else {
		out.Comment, err = l.comments.Load(ctx, storage.CommentKey(sub))()
	}
	return out, err
}

// reactionCounts answers the reactions fields through the request's
// loader: one BatchGetItem for the subjects of an operation.
func (r *Resolver) reactionCounts(ctx context.Context, sub storage.Subject) ([]*model.ReactionCount, error) {
	volatile(ctx)
	counts, err := loadersFor(ctx).reactions.Load(ctx, sub)()
	if err != nil {
		return nil, err
	}
	out := []*model.ReactionCount{}
	for _, kind := range storage.ReactionKinds {
		if n := counts[kind]; n > 0 {
			out = append(out, &model.ReactionCount{Kind: model.ReactionKind(kind), Count: int(n)})
		}
	}
	return out, nil
}

// viewerReactions answers the viewerReactions fields through the
// request's loader: none for an anonymous caller, with no read.
func (r *Resolver) viewerReactions(ctx context.Context, sub storage.Subject) ([]model.ReactionKind, error) {
	volatile(ctx)
	if auth.ActorFrom(ctx).Anonymous() {
		return []model.ReactionKind{}, nil
	}
	kinds, err := loadersFor(ctx).viewerReactions.Load(ctx, sub)()
	if err != nil {
		return nil, err
	}
	out := make([]model.ReactionKind, len(kinds))
	for i, k := range kinds {
		out[i] = model.ReactionKind(k)
	}
	return out, nil
}

// viewerHasReacted answers Post.viewerHasReacted.
func (r *Resolver) viewerHasReacted(ctx context.Context, sub storage.Subject, kind model.ReactionKind) (bool, error) {
	kinds, err := r.viewerReactions(ctx, sub)
	return slices.Contains(kinds, kind), err
}

// reactionCountsOf and viewerReactionsOf return the batch reads of the
// reactions loaders.
func reactionCountsOf(store *storage.Store) func(context.Context, []storage.Subject) ([]map[string]int64, []error) {
	return func(ctx context.Context, subs []storage.Subject) ([]map[string]int64, []error) {
		counts, err := store.ReactionCounts(ctx, subs)
		if err != nil {
			return make([]map[string]int64, len(subs)), slices.Repeat([]error{err}, len(subs))
		}
		return counts, make([]error, len(subs))
	}
}

func viewerReactionsOf(store *storage.Store) func(context.Context, []storage.Subject) ([][]string, []error) {
	return func(ctx context.Context, subs []storage.Subject) ([][]string, []error) {
		kinds, err := store.ReactionsOf(ctx, auth.ActorFrom(ctx).ID, subs)
		if err != nil {
			return make([][]string, len(subs)), slices.Repeat([]error{err}, len(subs))
		}
		return kinds, make([]error, len(subs))
	}
}

package graph

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// A signed-in reader's privacy (storage/privacy.go, storage/export.go):
// the download of their data and the deletion of their account.

func (r *Resolver) deleteMyAccount(ctx context.Context, in model.DeleteMyAccountInput) (*model.DeleteMyAccountPayload, error) {
	a, err := sessionActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.store.DeleteAccount(ctx, a.ID, in.Email); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, storage.ErrAccountClosed
		}
		return nil, err
	}
	return &model.DeleteMyAccountPayload{AccountID: a.ID}, nil
}

// ExportPath is where ExportMyData is served.
const ExportPath = "/me/export"

// ExportMyData returns the handler of GET /me/export: everything the
// store holds about the signed-in reader of the request's session token,
// as one JSON document to download, streamed as it is read. Without a
// token, or with one of an account that is deleted, the answer is 401;
// with a token that is not a reader session's (staff, or a reader of an
// identity provider), or one of a session made on another publication
// than store's (whose slug is slug; withStaff), 403.
func ExportMyData(store *storage.Store, slug string, v *auth.Verifier, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	export := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		a, err := sessionActor(ctx)
		if err == nil {
			_, err = store.AccountByID(ctx, a.ID)
			if errors.Is(err, storage.ErrNotFound) {
				err = storage.ErrAccountClosed
			}
		}
		switch {
		case errors.Is(err, storage.ErrAccountClosed):
			gqlhttp.WriteError(w, http.StatusUnauthorized, storage.ErrAccountClosed.Error(), CodeUnauthenticated)
			return
		case errors.Is(err, auth.ErrUnauthenticated):
			gqlhttp.WriteError(w, http.StatusUnauthorized, err.Error(), CodeUnauthenticated)
			return
		case errors.Is(err, auth.ErrForbidden):
			gqlhttp.WriteError(w, http.StatusForbidden, err.Error(), CodeForbidden)
			return
		case err != nil:
			logger.ErrorContext(ctx, "export", "err", err)
			gqlhttp.WriteError(w, http.StatusServiceUnavailable, internalMessage, CodeInternal)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Disposition", `attachment; filename="my-data.json"`)
		h.Set("Cache-Control", "private, no-store")
		bw := bufio.NewWriterSize(w, 32<<10)
		if err := store.ExportAccount(ctx, a.ID, bw); err != nil {
			// The status is sent: the document ends short, and the log
			// says why.
			logger.ErrorContext(ctx, "export cut short", "err", err)
		}
		if err := bw.Flush(); err != nil {
			logger.WarnContext(ctx, "export not sent", "err", err)
		}
	})
	return withActor(v, logger, withStaff(store, slug, logger, export))
}

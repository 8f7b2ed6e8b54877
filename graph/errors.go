package graph

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
)

// Error codes a client finds in extensions.code.
const (
	CodeNotFound     = "NOT_FOUND"
	CodeBadUserInput = "BAD_USER_INPUT"
	CodeConflict     = "CONFLICT"
	CodeInternal     = "INTERNAL"
	CodeBadRequest   = gqlhttp.CodeBadRequest
	CodeTimeout      = "TIMEOUT"
	CodeCanceled     = "CANCELED"
	CodeUnavailable  = "UNAVAILABLE"

	CodeUnauthenticated = "UNAUTHENTICATED"
	CodeForbidden       = "FORBIDDEN"
	CodeRateLimited     = "RATE_LIMITED"

	// CodeQuotaExceeded is a write that would take the publication past a
	// quota (its media library's, its posts', its webhooks'); extensions
	// say which limit, the usage and the limit.
	CodeQuotaExceeded = "QUOTA_EXCEEDED"

	// CodeSlowQuery is a search that would take too long (a wildcard, a
	// short prefix); CodeIndexBuilding a search while the server builds
	// its first search index.
	CodeSlowQuery     = "SLOW_QUERY"
	CodeIndexBuilding = "INDEX_BUILDING"

	// CodePublicationSuspended is a request for a publication a platform
	// admin suspended (storage.PublicationSuspended), by anyone else.
	CodePublicationSuspended = "PUBLICATION_SUSPENDED"
)

// internalMessage is all a client learns about an unexpected error; the
// detail goes to the log.
const internalMessage = "internal error"

// errorCodes is the one table from domain errors to what clients see. The
// first entry whose target matches (errors.Is) wins; extend adds details
// beyond the code.
var errorCodes = []struct {
	target error
	code   string
	extend func(err error, ext map[string]any)
}{
	{storage.ErrNotFound, CodeNotFound, nil},
	{storage.ErrPublicationSuspended, CodePublicationSuspended, nil},
	{storage.ErrInvalidInput, CodeBadUserInput, validationField},
	{storage.ErrVersionConflict, CodeConflict, currentVersion},
	{storage.ErrSlugTaken, CodeConflict, reason("SLUG_TAKEN")},
	{storage.ErrAlreadyExists, CodeConflict, reason("ALREADY_EXISTS")},
	{storage.ErrIdempotencyMismatch, CodeBadUserInput, field("idempotencyKey")},
	{storage.ErrRateLimited, CodeRateLimited, retryAfter},
	{storage.ErrQuotaExceeded, CodeQuotaExceeded, quotaDetails},
	{storage.ErrMediaInUse, CodeConflict, mediaUses},
	{storage.ErrDuplicateComment, CodeConflict, reason("DUPLICATE_COMMENT")},
	{storage.ErrNotPending, CodeConflict, reason("NOT_PENDING")},
	{storage.ErrLastOwner, CodeConflict, lastOwner},
	{storage.ErrSignInInvalid, CodeBadUserInput, reason("INVALID_SIGN_IN")},
	{storage.ErrSignInLimited, CodeRateLimited, signInLimit},
	{storage.ErrRefreshReused, CodeUnauthenticated, reason("REFRESH_TOKEN_REUSED")},
	{storage.ErrSessionInvalid, CodeUnauthenticated, reason("INVALID_REFRESH_TOKEN")},
	{storage.ErrSessionElsewhere, CodeForbidden, reason("OTHER_PUBLICATION")},
	{storage.ErrAccountClosed, CodeUnauthenticated, reason("ACCOUNT_CLOSED")},
	{search.ErrSlowQuery, CodeSlowQuery, nil},
	{search.ErrBuilding, CodeIndexBuilding, nil},
	{storage.ErrNotPostAuthor, CodeForbidden, nil},
	{storage.ErrNotMember, CodeForbidden, reason("NOT_MEMBER")},
	{auth.ErrUnauthenticated, CodeUnauthenticated, nil},
	{auth.ErrForbidden, CodeForbidden, nil},
}

// transientErrors are failures of the moment, not of the request: the
// client may send it again, a mutation with the same idempotency key. The
// first entry whose target matches wins; the cause is logged, and the
// client gets only the message.
var transientErrors = []struct {
	target  error
	code    string
	message string
}{
	{context.DeadlineExceeded, CodeTimeout, "the request did not finish in time, try again"},
	// Only the client ends a request's context early: it has gone away,
	// and the answer reaches no one.
	{context.Canceled, CodeCanceled, "the client canceled the request"},
	{storage.ErrUnavailable, CodeUnavailable, "the database is busy or unavailable, try again"},
	{storage.ErrBusy, CodeUnavailable, storage.ErrBusy.Error()},
}

// errorExtensions returns the extensions for a domain error and the
// message a client reads, or false when err is not one.
func errorExtensions(err error) (map[string]any, string, bool) {
	for _, e := range errorCodes {
		if !errors.Is(err, e.target) {
			continue
		}
		ext := map[string]any{"code": e.code}
		if e.extend != nil {
			e.extend(err, ext)
		}
		return ext, publicMessage(err, e.target), true
	}
	return nil, "", false
}

// publicMessage returns what a client reads of a domain error that matched
// target. Storage wraps its errors with what it was doing, internal ids
// included (`post "0190…": not found`), which would tell a hidden post from
// a missing one and date it; a client reads the error storage describes
// instead: the field and reason of bad input, else the sentinel's text.
// The messages of the GraphQL and auth layers are written for clients and
// pass whole.
func publicMessage(err, target error) string {
	if ve, ok := errors.AsType[*storage.ValidationError](err); ok {
		return ve.Error()
	}
	if rl, ok := errors.AsType[*storage.RateLimitError](err); ok {
		return rl.Error()
	}
	if sl, ok := errors.AsType[*storage.SignInLimitError](err); ok {
		return sl.Error()
	}
	if qe, ok := errors.AsType[*storage.QuotaError](err); ok {
		return qe.Error()
	}
	if ue, ok := errors.AsType[*storage.MediaInUseError](err); ok {
		return ue.Error()
	}
	if lo, ok := errors.AsType[*storage.LastOwnerError](err); ok {
		return lo.Error()
	}
	if ge, ok := errors.AsType[*gqlerror.Error](err); ok {
		// gqlgen wrapped the resolver's error with where it happened;
		// its Error() would begin with that ("input:1:10: ..."), which the
		// error's locations and path already say.
		if ge.Err == nil {
			return ge.Message
		}
		err = ge.Err
	}
	switch target {
	case storage.ErrNotFound, storage.ErrPublicationSuspended, storage.ErrVersionConflict, storage.ErrSlugTaken, storage.ErrAlreadyExists, storage.ErrIdempotencyMismatch,
		storage.ErrDuplicateComment, storage.ErrNotPending, storage.ErrSignInInvalid, storage.ErrSessionInvalid, storage.ErrSessionElsewhere, storage.ErrRefreshReused, storage.ErrAccountClosed:
		return target.Error()
	}
	return err.Error()
}

func validationField(err error, ext map[string]any) {
	if ve, ok := errors.AsType[*storage.ValidationError](err); ok && ve.Field != "" {
		ext["field"] = ve.Field
	}
}

func currentVersion(err error, ext map[string]any) {
	ext["reason"] = "VERSION_CONFLICT"
	if ce, ok := errors.AsType[*storage.ConflictError](err); ok {
		ext["currentVersion"] = ce.CurrentVersion
	}
}

// retryAfter says in whole seconds when a refused comment will be
// accepted.
func retryAfter(err error, ext map[string]any) {
	if rl, ok := errors.AsType[*storage.RateLimitError](err); ok {
		ext["retryAfter"] = int(rl.RetryAfter.Seconds())
	}
}

// signInLimit says which sign-in limit refused an email (EMAIL or
// CLIENT) and in whole seconds when to try again.
func signInLimit(err error, ext map[string]any) {
	if sl, ok := errors.AsType[*storage.SignInLimitError](err); ok {
		ext["reason"], ext["retryAfter"] = sl.Limit, int(sl.RetryAfter.Seconds())
	}
}

// quotaDetails says which quota refused a write (BYTES or FILES of the
// media library, POSTS or WEBHOOKS of the publication), what the
// publication holds of it and its limit.
func quotaDetails(err error, ext map[string]any) {
	if qe, ok := errors.AsType[*storage.QuotaError](err); ok {
		ext["limit"], ext["usage"], ext["max"] = strings.ToUpper(qe.Limit), qe.Usage, qe.Max
	}
}

// mediaUses says where a media item that cannot be deleted is used: as
// which post's cover or in which post's body (by the post's global id),
// as which author's avatar (by the author's), or as the site's logo or
// icon.
func mediaUses(err error, ext map[string]any) {
	ext["reason"] = "MEDIA_IN_USE"
	if ue, ok := errors.AsType[*storage.MediaInUseError](err); ok {
		uses := make([]map[string]any, len(ue.Uses))
		for i, u := range ue.Uses {
			use := map[string]any{"as": strings.ToUpper(u.As)}
			switch u.As {
			case "cover", "body":
				use["post"] = frontend.PostGlobalID(u.ID)
			case "avatar":
				use["author"] = frontend.AuthorGlobalID(u.ID)
			}
			uses[i] = use
		}
		ext["usedBy"] = uses
	}
}

// lastOwner says LAST_OWNER and, for an account's deletion, the
// publications it is the last owner of.
func lastOwner(err error, ext map[string]any) {
	ext["reason"] = "LAST_OWNER"
	if lo, ok := errors.AsType[*storage.LastOwnerError](err); ok {
		ext["publications"] = lo.Publications
	}
}

func reason(r string) func(error, map[string]any) {
	return func(_ error, ext map[string]any) { ext["reason"] = r }
}

func field(f string) func(error, map[string]any) {
	return func(_ error, ext map[string]any) { ext["field"] = f }
}

// presentError returns the error presenter of what gqlhttp does not
// present itself: errors that already carry a code (gqlgen's parse,
// validation and complexity errors, the limits, and recovered panics)
// pass unchanged, domain errors get their code from
// errorCodes, transient ones are logged as warnings and get their code and
// message from transientErrors, gqlgen's errors about an undecodable
// request get BAD_REQUEST, and anything else is logged and becomes INTERNAL
// with no detail.
func presentError(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		if _, ok := gqlErr.Extensions["code"]; ok {
			return gqlErr
		}
		if ext, msg, ok := errorExtensions(err); ok {
			gqlErr.Message, gqlErr.Extensions = msg, ext
			return gqlErr
		}
		if ext, msg, ok := liveError(err); ok {
			gqlErr.Message, gqlErr.Extensions = msg, ext
			return gqlErr
		}
		for _, t := range transientErrors {
			if errors.Is(err, t.target) {
				logger.WarnContext(ctx, "graphql request failed", "err", err, "path", gqlErr.Path.String())
				return &gqlerror.Error{Message: t.message, Path: gqlErr.Path, Locations: gqlErr.Locations,
					Extensions: map[string]any{"code": t.code}}
			}
		}
		if gqlErr.Err == nil && len(gqlErr.Path) == 0 {
			// gqlgen's own errors about the request itself, such as a body
			// that is not JSON: the message is about the client's input.
			// gqlgen quotes the whole body after "body:"; a client has it.
			gqlErr.Message, _, _ = strings.Cut(gqlErr.Message, " body:")
			gqlErr.Extensions = map[string]any{"code": CodeBadRequest}
			return gqlErr
		}
		logger.ErrorContext(ctx, "graphql request failed", "err", err, "path", gqlErr.Path.String())
		return internalError(gqlErr.Path, gqlErr.Locations)
	}
}

// recoverPanic returns the recover func: it logs the panic with its stack
// and answers INTERNAL.
func recoverPanic(logger *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "panic in resolver", "panic", p, "stack", string(debug.Stack()))
		return internalError(graphql.GetPath(ctx), nil)
	}
}

func internalError(path ast.Path, locations []gqlerror.Location) *gqlerror.Error {
	return &gqlerror.Error{
		Message:    internalMessage,
		Path:       path,
		Locations:  locations,
		Extensions: map[string]any{"code": CodeInternal},
	}
}

package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

func TestPresentErrorMapsDomainErrors(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    map[string]any
		message string
	}{
		{"not found names no internal id", fmt.Errorf("post %q: %w", "0190a1b2-c3d4", storage.ErrNotFound),
			map[string]any{"code": CodeNotFound}, "not found"},
		{"validation error names its field", fmt.Errorf("create post: %w", &storage.ValidationError{Field: "first", Reason: "must be between 1 and 100"}),
			map[string]any{"code": CodeBadUserInput, "field": "first"}, "first: must be between 1 and 100"},
		{"invalid input without a field", fmt.Errorf("%w: bad DateTime", storage.ErrInvalidInput),
			map[string]any{"code": CodeBadUserInput}, "invalid input: bad DateTime"},
		{"version conflict carries the current version", fmt.Errorf("update post %q: %w", "0190a1b2", &storage.ConflictError{CurrentVersion: 7}),
			map[string]any{"code": CodeConflict, "reason": "VERSION_CONFLICT", "currentVersion": int64(7)}, "version conflict"},
		{"slug taken", fmt.Errorf("post %q: %w", "0190a1b2", storage.ErrSlugTaken),
			map[string]any{"code": CodeConflict, "reason": "SLUG_TAKEN"}, "slug taken"},
		{"already exists", storage.ErrAlreadyExists,
			map[string]any{"code": CodeConflict, "reason": "ALREADY_EXISTS"}, "already exists"},
		{"idempotency key reuse", storage.ErrIdempotencyMismatch,
			map[string]any{"code": CodeBadUserInput, "field": "idempotencyKey"}, storage.ErrIdempotencyMismatch.Error()},
		{"rate limit says when to retry", fmt.Errorf("add comment: %w", &storage.RateLimitError{RetryAfter: 12 * time.Second}),
			map[string]any{"code": CodeRateLimited, "retryAfter": 12}, "too many comments in a minute, try again in 12s"},
		{"duplicate comment", storage.ErrDuplicateComment,
			map[string]any{"code": CodeConflict, "reason": "DUPLICATE_COMMENT"}, storage.ErrDuplicateComment.Error()},
		{"not pending", fmt.Errorf("comment %q: %w", "c1", storage.ErrNotPending),
			map[string]any{"code": CodeConflict, "reason": "NOT_PENDING"}, storage.ErrNotPending.Error()},
		{"no token", fmt.Errorf("%w: send a token", auth.ErrUnauthenticated),
			map[string]any{"code": CodeUnauthenticated}, "authentication required: send a token"},
		{"not allowed", fmt.Errorf("%w: admins only", auth.ErrForbidden),
			map[string]any{"code": CodeForbidden}, "not allowed: admins only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			got := presentError(slog.New(slog.NewTextHandler(&log, nil)))(context.Background(), tt.err)
			if !reflect.DeepEqual(got.Extensions, tt.want) {
				t.Errorf("extensions = %v, want %v", got.Extensions, tt.want)
			}
			if got.Message != tt.message {
				t.Errorf("message = %q, want %q", got.Message, tt.message)
			}
			if log.Len() != 0 {
				t.Errorf("a domain error was logged: %s", log.String())
			}
		})
	}
}

func TestPresentErrorHidesInternalErrors(t *testing.T) {
	var log bytes.Buffer
	err := errors.New("dial tcp 10.0.0.1:8000: connection refused")
	got := presentError(slog.New(slog.NewTextHandler(&log, nil)))(context.Background(), err)
	if got.Message != "internal error" || got.Extensions["code"] != CodeInternal {
		t.Errorf("got %q %v, want internal error with code INTERNAL", got.Message, got.Extensions)
	}
	if !strings.Contains(log.String(), "connection refused") {
		t.Errorf("log = %q, want the detail", log.String())
	}
}

func TestPresentErrorKeepsExistingCodes(t *testing.T) {
	in := &gqlerror.Error{Message: "Cannot query field", Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}}
	got := presentError(slog.Default())(context.Background(), in)
	if got.Message != in.Message || got.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("got %q %v, want the error unchanged", got.Message, got.Extensions)
	}
}

func TestRecoverPanicAnswersInternal(t *testing.T) {
	var log bytes.Buffer
	err := recoverPanic(slog.New(slog.NewTextHandler(&log, nil)))(context.Background(), "boom")
	got := presentError(slog.Default())(context.Background(), err)
	if got.Message != "internal error" || got.Extensions["code"] != CodeInternal {
		t.Errorf("got %q %v, want internal error with code INTERNAL", got.Message, got.Extensions)
	}
	if !strings.Contains(log.String(), "boom") {
		t.Errorf("log = %q, want the panic value", log.String())
	}
}

func TestPresentErrorTransientErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code string
	}{
		{"the request's deadline", fmt.Errorf("query feed: operation error DynamoDB: Query, %w", context.DeadlineExceeded), CodeTimeout},
		{"DynamoDB throttling after the retries", fmt.Errorf("get post: %w", fmt.Errorf("%w: ThrottlingException on table blog", storage.ErrUnavailable)), CodeUnavailable},
		{"writes that kept colliding", storage.ErrBusy, CodeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			got := presentError(slog.New(slog.NewTextHandler(&log, nil)))(context.Background(), tt.err)
			if got.Extensions["code"] != tt.code || len(got.Extensions) != 1 {
				t.Errorf("extensions = %v, want only the code %s", got.Extensions, tt.code)
			}
			if strings.Contains(got.Message, "DynamoDB") || strings.Contains(got.Message, "blog") {
				t.Errorf("message %q tells the cause", got.Message)
			}
			if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), tt.err.Error()[:10]) {
				t.Errorf("log = %q, want the cause as a warning", log.String())
			}
		})
	}
}

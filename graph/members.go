package graph

import (
	"context"
	"encoding/csv"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// The publication's members (storage/members.go): the admins' list and
// search, and its CSV export.

func (r *Resolver) members(ctx context.Context, query *string, first *int, after *string) (*model.MemberConnection, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	p, err := pageOf(first, after, nil, nil)
	if err != nil {
		return nil, err
	}
	res, err := r.store.Members(ctx, deref(query), p)
	if err != nil {
		return nil, err
	}
	return &model.MemberConnection{
		Edges:    edges(res, func(c string, n *storage.Member) *model.MemberEdge { return &model.MemberEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(res),
	}, nil
}

// MembersCSVPath is where MembersCSV is served.
const MembersCSVPath = "/members.csv"

// membersCSVPage is how many members one Query of the export reads.
const membersCSVPage = 100

// MembersCSV returns the handler of GET /members.csv: every member of
// store's publication, by address, as CSV (RFC 4180, CRLF line ends) for
// an admin's token or a platform admin's (who exports a suspended
// publication's for its owners), read and written a page of 100 at a time so the
// export never holds the whole list. A cell that starts with = + - or @
// gets a leading ' so a spreadsheet never runs it as a formula. Without
// a token the answer is 401, for another token 403. A token is taken as
// the GraphQL endpoint of store's publication (whose slug is slug) takes
// it (withStaff): one bound to another publication is 403 too.
func MembersCSV(store *storage.Store, slug string, v *auth.Verifier, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	export := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if err := admin(ctx); err != nil && !auth.ActorFrom(ctx).IsPlatformAdmin() {
			status, code := http.StatusForbidden, CodeForbidden
			if errors.Is(err, auth.ErrUnauthenticated) {
				status, code = http.StatusUnauthorized, CodeUnauthenticated
			}
			gqlhttp.WriteError(w, status, err.Error(), code)
			return
		}
		p := storage.PageArgs{Limit: membersCSVPage}
		res, err := store.Members(ctx, "", p)
		if err != nil {
			logger.ErrorContext(ctx, "members export", "err", err)
			gqlhttp.WriteError(w, http.StatusServiceUnavailable, internalMessage, CodeInternal)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="members.csv"`)
		h.Set("Cache-Control", "private, no-store")
		cw := csv.NewWriter(w)
		cw.UseCRLF = true
		_ = cw.Write(membersCSVHeader)
		for {
			for _, m := range res.Items {
				_ = cw.Write(memberRow(m))
			}
			cw.Flush()
			if !res.HasNext || len(res.Cursors) == 0 {
				break
			}
			p.After = res.Cursors[len(res.Cursors)-1]
			if res, err = store.Members(ctx, "", p); err != nil {
				// The status is sent: the export ends short, and the
				// log says why.
				logger.ErrorContext(ctx, "members export cut short", "err", err)
				return
			}
		}
		if err := cw.Error(); err != nil {
			logger.WarnContext(ctx, "members export not sent", "err", err)
		}
	})
	return withActor(v, logger, withStaff(store, slug, logger, export))
}

// membersCSVHeader names the columns of memberRow.
var membersCSVHeader = []string{"account_id", "email", "email_verified", "tier", "newsletters", "created_at", "last_seen_at"}

// memberRow returns the cells of m in the export.
func memberRow(m *storage.Member) []string {
	return []string{safeCell(m.AccountID), safeCell(m.Email), boolCell(m.EmailVerified), safeCell(string(m.Tier)),
		safeCell(strings.Join(m.Newsletters, " ")), m.CreatedAt.UTC().Format(time.RFC3339), m.LastSeenAt.UTC().Format(time.RFC3339)}
}

// safeCell returns s as a spreadsheet shows it and never evaluates: with
// a leading ' when it starts with a character that begins a formula.
func safeCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func boolCell(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// visibilityOf returns the storage value of a visibility input; nil is
// none (public).
func visibilityOf(v *model.PostVisibility) storage.Visibility {
	if v == nil {
		return ""
	}
	return storage.Visibility(*v)
}

// locked reports whether the body of p is kept from the actor of ctx: p
// is for members, and the actor is neither staff nor, by one GetItem a
// request, a member. An answer that shows a members-only body is marked
// uncacheable, whoever reads it, so no shared cache ever keeps it; a
// locked one is the same for every anonymous reader and stays public.
func (r *Resolver) locked(ctx context.Context, p *storage.Post) (bool, error) {
	if p.Visibility != storage.VisibilityMembers {
		return false, nil
	}
	a := auth.ActorFrom(ctx)
	if a.Anonymous() {
		return true, nil
	}
	if !a.IsAuthor() {
		member, err := loadersFor(ctx).membership.Load(ctx, a.ID)()
		if err != nil {
			return false, err
		}
		if !member {
			return true, nil
		}
	}
	gqlhttp.NoStore(ctx)
	return false, nil
}

// membershipOf returns a batch read of whether accounts are members of
// the store's publication: one GetItem each (the loader asks for one, the
// actor's).
func membershipOf(store *storage.Store) func(context.Context, []string) ([]bool, []error) {
	return func(ctx context.Context, ids []string) ([]bool, []error) {
		values, errs := make([]bool, len(ids)), make([]error, len(ids))
		for i, id := range ids {
			_, err := store.Member(ctx, id)
			values[i] = err == nil
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				errs[i] = err
			}
		}
		return values, errs
	}
}

package storage

import (
	"context"
	"fmt"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// CreateCategory creates a category; an existing slug is ErrAlreadyExists.
func (s *Store) CreateCategory(ctx context.Context, in NewCategory) (*Category, error) {
	err := firstErr(
		validateSlug("slug", in.Slug),
		validateLine("name", in.Name, MaxNameLength),
		validateText("description", in.Description, false, MaxDescriptionLength),
	)
	if err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "createCategory", in.IdempotencyKey, in, func(rec *idem) (*Category, error) {
		now := s.Now()
		c := &Category{Slug: in.Slug, Name: in.Name, Description: in.Description, CreatedAt: now, UpdatedAt: now, Version: 1}
		t := s.db.NewTxn()
		err := firstErr(
			t.Put(newCategoryItem(s.ks, c), ptr(dynamo.CondNotExists()), ErrAlreadyExists),
			countStats(s.ks, t, "categoryCount", 1),
		)
		if err != nil {
			return nil, err
		}
		return execRecord(ctx, s, t, rec, c)
	})
}

// UpdateCategory edits a category. A new name reaches every published post
// and copy that carries it before UpdateCategory returns; drafts keep the
// names they were last saved with.
func (s *Store) UpdateCategory(ctx context.Context, in CategoryPatch) (*Category, error) {
	err := firstErr(
		validateSlug("slug", in.Slug),
		validateOpt(in.Name, func(v string) error { return validateLine("name", v, MaxNameLength) }),
		validateOpt(in.Description, func(v string) error { return validateText("description", v, false, MaxDescriptionLength) }),
	)
	if err != nil {
		return nil, err
	}
	c, err := idempotent(ctx, s, "updateCategory", in.IdempotencyKey, in, func(rec *idem) (*Category, error) {
		return dynamo.RetryWrite(ctx, func() (*Category, error) {
			var it categoryItem
			if err := s.db.Get(ctx, s.ks.Category(in.Slug), true, &it); err != nil {
				return nil, fmt.Errorf("category %q: %w", in.Slug, err)
			}
			if in.ExpectedVersion != 0 && it.Version != in.ExpectedVersion {
				return nil, &ConflictError{CurrentVersion: it.Version}
			}
			cond := condVersion(it.Version)
			if in.Name != nil && *in.Name != it.Name {
				it.NameVer++
			}
			setOpt(&it.Name, in.Name)
			setOpt(&it.Description, in.Description)
			it.Version++
			it.UpdatedAt = keys.Time(s.Now())
			upd := profileUpdate(it.Version, it.NameVer, it.UpdatedAt, map[string]string{
				"name": it.Name, "description": it.Description,
			})
			t := s.db.NewTxn()
			if err := t.Update(s.ks.Category(in.Slug), upd, &cond, dynamo.ErrRetry); err != nil {
				return nil, err
			}
			return execRecord(ctx, s, t, rec, it.category(s.nowKey()))
		})
	})
	if err != nil {
		return nil, err
	}
	if in.Name != nil {
		if err := s.refreshAll(ctx, s.categoryPostIDs, in.Slug, s.ks.Category(in.Slug)); err != nil {
			return nil, fmt.Errorf("rename category %q: %w", in.Slug, err)
		}
	}
	return c, nil
}

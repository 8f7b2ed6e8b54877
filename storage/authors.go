package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"golang.org/x/sync/errgroup"
)

// renameConcurrency bounds the posts refreshed at once after a rename.
const renameConcurrency = 4

// CreateAuthor creates an author; an existing id is ErrAlreadyExists.
func (s *Store) CreateAuthor(ctx context.Context, in NewAuthor) (*Author, error) {
	if in.ID == "" {
		in.ID = newID()
	}
	err := firstErr(
		validateID("id", in.ID),
		validateLine("name", in.Name, MaxNameLength),
		validateText("bio", in.Bio, false, MaxBioLength),
		validateURL("avatarUrl", in.AvatarURL),
	)
	if err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "createAuthor", in.IdempotencyKey, in, func(rec *idem) (*Author, error) {
		now := s.Now()
		a := &Author{ID: in.ID, Name: in.Name, Bio: in.Bio, AvatarURL: in.AvatarURL, CreatedAt: now, UpdatedAt: now, Version: 1}
		t := s.newTxn()
		err := firstErr(
			t.put(newAuthorItem(a), ptr(condNotExists()), ErrAlreadyExists),
			countStats(t, "authorCount", 1),
		)
		if err != nil {
			return nil, err
		}
		return execRecord(ctx, s, t, rec, a)
	})
}

// UpdateAuthor edits an author. A new name reaches every post and copy
// that carries it before UpdateAuthor returns.
func (s *Store) UpdateAuthor(ctx context.Context, in AuthorPatch) (*Author, error) {
	err := firstErr(
		validateID("id", in.ID),
		validateOpt(in.Name, func(v string) error { return validateLine("name", v, MaxNameLength) }),
		validateOpt(in.Bio, func(v string) error { return validateText("bio", v, false, MaxBioLength) }),
		validateOpt(in.AvatarURL, func(v string) error { return validateURL("avatarUrl", v) }),
	)
	if err != nil {
		return nil, err
	}
	a, err := idempotent(ctx, s, "updateAuthor", in.IdempotencyKey, in, func(rec *idem) (*Author, error) {
		return retryWrite(ctx, func() (*Author, error) {
			var it authorItem
			if err := s.getItem(ctx, authorKey(in.ID), true, &it); err != nil {
				return nil, fmt.Errorf("author %q: %w", in.ID, err)
			}
			if in.ExpectedVersion != 0 && it.Version != in.ExpectedVersion {
				return nil, &ConflictError{CurrentVersion: it.Version}
			}
			cond := condVersion(it.Version)
			if in.Name != nil && *in.Name != it.Name {
				it.NameVer++
			}
			setOpt(&it.Name, in.Name)
			setOpt(&it.Bio, in.Bio)
			setOpt(&it.AvatarURL, in.AvatarURL)
			it.Version++
			it.UpdatedAt = keyTime(s.Now())
			upd := profileUpdate(it.Version, it.NameVer, it.UpdatedAt, map[string]string{
				"name": it.Name, "bio": it.Bio, "avatarUrl": it.AvatarURL,
			})
			t := s.newTxn()
			if err := t.update(authorKey(in.ID), upd, &cond, errRetry); err != nil {
				return nil, err
			}
			return execRecord(ctx, s, t, rec, it.author(s.nowKey()))
		})
	})
	if err != nil {
		return nil, err
	}
	if in.Name != nil {
		// Also on a replay: a first call that failed half-way through the
		// renames is finished by its retry.
		if err := s.refreshAll(ctx, s.authorPostIDs, in.ID); err != nil {
			return nil, fmt.Errorf("rename author %q: %w", in.ID, err)
		}
	}
	return a, nil
}

// profileUpdate sets the fields of an author or a category, with its new
// version, nameVer and updatedAt, and nothing else: its postCount and
// scheduled-post entries change in the transactions of post writes, which
// a write of the whole item read a moment ago would undo. A field set to
// "" is removed, as a whole-item write leaves it out.
func profileUpdate(version, nameVer int64, updatedAt string, fields map[string]string) expression.UpdateBuilder {
	upd := expression.Set(expression.Name("version"), expression.Value(version)).
		Set(expression.Name("nameVer"), expression.Value(nameVer)).
		Set(expression.Name("updatedAt"), expression.Value(updatedAt))
	for name, v := range fields {
		if v == "" {
			upd = upd.Remove(expression.Name(name))
		} else {
			upd = upd.Set(expression.Name(name), expression.Value(v))
		}
	}
	return upd
}

// execRecord runs t with the idempotency record of result.
func execRecord[T any](ctx context.Context, s *Store, t *txn, rec *idem, result T) (T, error) {
	var zero T
	token, err := s.record(t, rec, result)
	if err != nil {
		return zero, err
	}
	if err := s.exec(ctx, t, token); err != nil {
		return zero, err
	}
	return result, nil
}

// authorPostIDs lists every post of an author: published and scheduled ones
// from the author's partition, drafts from GSI1.
func (s *Store) authorPostIDs(ctx context.Context, authorID string) ([]string, error) {
	published, err := s.collectIDs(ctx, false, expression.Key(attrPK).Equal(expression.Value(prefixAuthor+authorID)).
		And(expression.Key(attrSK).BeginsWith(prefixPost)))
	if err != nil {
		return nil, err
	}
	drafts, err := s.collectIDs(ctx, true, expression.Key(attrGSI1PK).Equal(expression.Value(draftPartition(authorID))))
	return append(published, drafts...), err
}

// categoryPostIDs lists the published and scheduled posts of a category.
func (s *Store) categoryPostIDs(ctx context.Context, slug string) ([]string, error) {
	return s.collectIDs(ctx, true, expression.Key(attrGSI1PK).Equal(expression.Value(categoryPartition(slug))))
}

func (s *Store) collectIDs(ctx context.Context, index bool, cond expression.KeyConditionBuilder) ([]string, error) {
	expr, err := buildExpr(expression.NewBuilder().WithKeyCondition(cond).
		WithProjection(expression.NamesList(expression.Name("id"))))
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
	if index {
		in.IndexName = aws.String(indexGSI1)
	}
	var ids []string
	pages := dynamodb.NewQueryPaginator(s.db, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		var rows []struct {
			ID string `dynamodbav:"id"`
		}
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// refreshAll brings the names in every post listed by list(owner) up to
// date.
func (s *Store) refreshAll(ctx context.Context, list func(context.Context, string) ([]string, error), owner string) error {
	ids, err := list(ctx, owner)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(renameConcurrency)
	for _, id := range ids {
		g.Go(func() error { return s.refreshNames(gctx, id) })
	}
	return g.Wait()
}

// refreshNames writes the current author and category names into a post
// and all its copies in one transaction, guarded so that it never writes a
// name that a newer rename has replaced. A post deleted meanwhile is done.
func (s *Store) refreshNames(ctx context.Context, postID string) error {
	_, err := retryWrite(ctx, func() (struct{}, error) {
		p, r, err := s.readPost(ctx, postID, nil, true)
		if errors.Is(err, ErrNotFound) {
			return struct{}{}, nil
		}
		if err != nil {
			return struct{}{}, err
		}
		fresh := *p
		slugs := p.catSlugs()
		r.keep(p)
		if err := r.setNames(&fresh, slugs); err != nil {
			return struct{}{}, err
		}
		if sameNames(p, &fresh) {
			return struct{}{}, nil
		}
		upd := expression.Set(expression.Name("authorName"), expression.Value(fresh.AuthorName)).
			Set(expression.Name("authorVer"), expression.Value(fresh.AuthorVer))
		if len(fresh.Cats) > 0 {
			upd = upd.Set(expression.Name("cats"), expression.Value(fresh.Cats)).
				Set(expression.Name("catVer"), expression.Value(fresh.CatVer))
		}
		t := s.newTxn()
		errs := []error{
			t.update(postKey(postID), upd, ptr(condVersion(p.Version)), errRetry),
			t.check(authorKey(p.AuthorID), nameVer(fresh.AuthorVer), errRetry),
		}
		for _, k := range p.copyKeys() {
			errs = append(errs, t.update(k, upd, ptr(condExists()), errRetry))
		}
		for _, c := range fresh.Cats {
			errs = append(errs, t.check(categoryKey(c.Slug), nameVer(fresh.CatVer[c.Slug]), errRetry))
		}
		if err := errors.Join(errs...); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, s.exec(ctx, t, "")
	})
	return err
}

func sameNames(a, b *postItem) bool {
	if a.AuthorName != b.AuthorName || a.AuthorVer != b.AuthorVer || len(a.Cats) != len(b.Cats) {
		return false
	}
	for i := range a.Cats {
		if a.Cats[i] != b.Cats[i] || a.CatVer[a.Cats[i].Slug] != b.CatVer[b.Cats[i].Slug] {
			return false
		}
	}
	return true
}

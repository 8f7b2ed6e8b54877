package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The staff roles of an account in its export. Each role the account
// holds has an entry in its trail (READER#<id>, ROLE#<publication>;
// staffroles.go), so the export reads them as the deletion finds them:
// a consistent Query of the ROLE# entries, a page of trailPage at a
// time, then one consistent BatchGetItem of the page's memberships
// (STAFF#<account> in each publication's space) and of their
// publications' directory items, a hundred keys a call. Each page is
// written before the next is read, so an account with many roles costs
// the memory of one page. Request budget, for G roles: 1 Query per
// trailPage roles (1 when there are none) and 1 BatchGetItem per 50.
// A role granted before roles had trail entries, in a publication whose
// entries MigrateStaffTrails has not written yet, is not listed.

// exportRoles writes the field "staffRoles" of the export of the account
// id to x: its staff roles, in the order of their publications' ids.
func (s *Store) exportRoles(ctx context.Context, id string, x *exportWriter) error {
	x.raw(`,"staffRoles":[`)
	first := true
	after := ""
	for {
		page, more, err := s.rolePageOf(ctx, id, after)
		if err != nil {
			return err
		}
		if err := s.exportRolePage(ctx, id, page, x, &first); err != nil {
			return err
		}
		if x.err != nil {
			return x.err
		}
		if !more || len(page) == 0 {
			break
		}
		after = page[len(page)-1].SK
	}
	x.raw("]")
	return nil
}

// rolePageOf returns the next page of the ROLE# entries of the account
// id after the sort key after ("" for the first), and whether more
// follow: one consistent Query.
func (s *Store) rolePageOf(ctx context.Context, id, after string) ([]key, bool, error) {
	in, err := s.roleEntries(id)
	if err != nil {
		return nil, false, err
	}
	in.Limit = aws.Int32(trailPage)
	if after != "" {
		in.ExclusiveStartKey = dynamo.MustKey(key{PK: keys.PrefixReader + id, SK: after})
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, false, fmt.Errorf("roles of account %q: %w", id, err)
	}
	var page []key
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &page); err != nil {
		return nil, false, fmt.Errorf("decode roles of account %q: %w", id, err)
	}
	return page, len(out.LastEvaluatedKey) > 0, nil
}

// exportRolePage writes the roles of one page of ROLE# entries, read
// with their publications' directory items in one BatchGetItem per 100
// keys. An entry whose membership is gone (taken away since the Query)
// is left out; a role in a publication without a directory item is
// written with an empty slug and title.
func (s *Store) exportRolePage(ctx context.Context, id string, page []key, x *exportWriter, first *bool) error {
	type role struct {
		pubID string
		staff key
	}
	roles := make([]role, 0, len(page))
	ks := make([]key, 0, 2*len(page))
	for _, e := range page {
		pubID := strings.TrimPrefix(e.SK, keys.PrefixRole)
		space, err := keys.In(pubID)
		if err != nil {
			continue // no publication has such an id
		}
		r := role{pubID: pubID, staff: space.Staff(id)}
		roles = append(roles, r)
		ks = append(ks, r.staff, keys.Directory(pubID))
	}
	if len(ks) == 0 {
		return nil
	}
	// The memberships are in other publications' spaces than the
	// Store's: the read names each key it touches.
	found, err := s.db.Unconfined().BatchGet(ctx, ks, true)
	if err != nil {
		return fmt.Errorf("export: roles: %w", err)
	}
	for _, r := range roles {
		var m staffItem
		if dynamo.DecodeFound(found, r.staff, &m) != nil || m.AccountID != id {
			continue
		}
		var p publicationItem
		_ = dynamo.DecodeFound(found, keys.Directory(r.pubID), &p) // none: no slug, no title
		x.element(map[string]any{"publication": r.pubID, "slug": p.Slug, "title": p.Title, "role": m.Role,
			"email": m.Email, "grantedAt": m.CreatedAt, "updatedAt": m.UpdatedAt}, first)
	}
	return nil
}

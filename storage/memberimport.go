package storage

import (
	"context"
	"fmt"

	"github.com/blogql/blog/storage/internal/keys"
)

// Importing members: a publication that brings its list of addresses
// from elsewhere makes each a member, with the items a first sign-in
// makes (signin.go) but the session: the account, its address's item,
// the membership (on the newsletter) and its trail, in transactions of
// importBatch addresses. An address that has an account already is
// passed over: its reader becomes a member by signing in. Request budget:
//
//	ImportMembers  per importBatch addresses: 1 BatchGetItem + 1 TransactWriteItems

// importBatch is how many addresses one transaction of ImportMembers
// makes members: four actions each, within a transaction's 100.
const importBatch = 25

// ImportMembers makes the readers at emails members of the publication
// who get its newsletter, each with a new account whose address counts
// as verified, and returns those accounts. Addresses are taken as
// NormalizeEmail keeps them; one that has an account, or appears twice,
// is passed over. It returns a *ValidationError for a malformed address
// (before writing anything), ErrAlreadyExists when a sign-in made an
// account of an address of a batch meanwhile, and the DynamoDB error
// otherwise, with the accounts made until then.
func (s *Store) ImportMembers(ctx context.Context, emails []string) ([]Account, error) {
	normal := make([]string, 0, len(emails))
	seen := make(map[string]bool, len(emails))
	for _, e := range emails {
		n, err := NormalizeEmail(e)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			normal = append(normal, n)
		}
	}
	var made []Account
	for len(normal) > 0 {
		batch := normal[:min(importBatch, len(normal))]
		normal = normal[len(batch):]
		accts, err := s.importMembers(ctx, batch)
		if err != nil {
			return made, err
		}
		made = append(made, accts...)
	}
	return made, nil
}

// importMembers makes the addresses of batch without an account members,
// in one transaction.
func (s *Store) importMembers(ctx context.Context, batch []string) ([]Account, error) {
	ks := make([]key, len(batch))
	for i, e := range batch {
		ks[i] = keys.AccountEmail(e)
	}
	found, err := s.db.BatchGet(ctx, ks, true)
	if err != nil {
		return nil, fmt.Errorf("import members: %w", err)
	}
	now := s.Now()
	t := s.db.NewTxn()
	var made []Account
	for i, e := range batch {
		if _, ok := found[ks[i]]; ok {
			continue
		}
		acct := Account{ID: newID(), Email: e, EmailVerified: true, CreatedAt: now}
		if err := putNewAccount(t, acct, ErrAlreadyExists); err != nil {
			return nil, err
		}
		if err := s.putMember(t, acct, now); err != nil {
			return nil, err
		}
		if err := t.Put(newTrail(s.ks.Trail(acct.ID, keys.TrailMember, ""), now), nil, nil); err != nil {
			return nil, err
		}
		made = append(made, acct)
	}
	if t.Len() == 0 {
		return nil, nil
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return nil, fmt.Errorf("import members: %w", err)
	}
	return made, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/devtokens"
)

// tokenCommand is the first argument that mints a token instead of
// running the server.
const tokenCommand = "token"

// runToken is the command "blog token -role ROLE -sub SUBJECT
// [-publication P] [-ttl D]":
// it prints a bearer token for the subject with the role, the token a
// server started with the same variables accepts; for development and
// tests against such a server. A reader's token is signed with
// READER_JWT_SECRET when it is set and carries READER_JWT_ISSUER and
// READER_JWT_AUDIENCE (else JWT_ISSUER's and JWT_AUDIENCE's); any other
// role's with JWT_SECRET, carrying JWT_ISSUER and JWT_AUDIENCE: the reader
// secret never signs a staff token. With -publication the token is bound
// to that publication (its pub claim) and -role is a role in it. It fails without the secret the role
// needs (a server without one, in the embedded mode, logs development
// tokens of its own at start), with a secret shorter than
// auth.MinSecretBytes, or with bad flags; -h prints the help and returns
// nil.
func runToken(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("blog token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	role := fs.String("role", auth.RoleAuthor, "the `role` the token grants: "+strings.Join(devtokens.Roles, ", "))
	sub := fs.String("sub", "", "the `subject`: the id of the author (or reader) the token signs in as, e.g. ada-lovelace")
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the token stays valid")
	pub := fs.String("publication", "", "bind the token to the publication of this `id or slug`: -role is then a role in it ("+
		strings.Join(auth.PublicationRoles, ", ")+"), at most the one the subject's account has on its staff")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: blog token -role ROLE -sub SUBJECT [-publication ID|SLUG] [-ttl DURATION]\n\n"+
			"Prints a bearer token signed with JWT_SECRET (and carrying JWT_ISSUER and JWT_AUDIENCE when set),\n"+
			"which a server started with the same variables accepts; a reader's is signed with READER_JWT_SECRET\n"+
			"(carrying READER_JWT_ISSUER and READER_JWT_AUDIENCE) when that is set. For development only.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c := auth.Config{Issuer: getenv("JWT_ISSUER"), Audience: getenv("JWT_AUDIENCE"), Reader: auth.ReaderConfig{
		Issuer: getenv("READER_JWT_ISSUER"), Audience: getenv("READER_JWT_AUDIENCE"),
	}}
	if secret := getenv("JWT_SECRET"); secret != "" {
		c.Secret = []byte(secret)
	}
	if secret := getenv("READER_JWT_SECRET"); secret != "" {
		c.Reader.Secret = []byte(secret)
	}
	switch {
	case c.Secret == nil && c.Reader.Secret == nil:
		return errors.New("JWT_SECRET is not set: the token is signed with the secret the server verifies tokens with; " +
			"a server without one, in the embedded mode, logs development tokens of its own at start")
	case c.Secret == nil && (*role != auth.RoleReader || *pub != ""):
		return fmt.Errorf("JWT_SECRET is not set: a %s token is signed with the staff secret; READER_JWT_SECRET signs reader tokens only", *role)
	}
	token, err := devtokens.MintIn(c, *sub, *role, *pub, time.Now(), *ttl)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, token)
	return err
}

package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are the claims of a token: the registered ones (sub names the
// principal: an author's id, or a reader's), the actor's roles, and the
// standard profile claims name and picture that show a reader. They are
// taken as the token has them; the name a reader is shown by is made
// plain text of one line when it is kept (no markup, no invisible
// characters, NFKC: see storage's names.go).
type Claims struct {
	jwt.RegisteredClaims
	Roles   []string `json:"roles,omitempty"`
	Name    string   `json:"name,omitempty"`
	Picture string   `json:"picture,omitempty"`
	// SessionID names the reader session an access token was issued
	// for (the sid claim of OpenID Connect's session management).
	SessionID string `json:"sid,omitempty"`
	// Publication binds a staff token to one publication (its id or
	// slug): the token's subject is an account of that publication's
	// staff, and the token is refused on any other. A reader session's
	// access token names the publication it was issued on (its id), and
	// is refused on any other too.
	Publication string `json:"pub,omitempty"`
}

// claimError says what is wrong with a token's claims, in words a client
// reads.
type claimError string

func (e claimError) Error() string { return string(e) }

// UnmarshalJSON decodes claims strictly, as RFC 7519 writes them: the
// times (exp, nbf, iat) are numbers of seconds, not strings that hold one;
// sub and iss are strings; aud a string or a list of strings; roles a
// list of strings. It returns a claimError naming the claim that is not.
func (c *Claims) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return claimError("claims are not a JSON object")
	}
	is := func(v json.RawMessage, kind func(byte) bool) bool {
		v = bytes.TrimSpace(v)
		return len(v) > 0 && kind(v[0])
	}
	number := func(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }
	str := func(c byte) bool { return c == '"' }
	for _, name := range []string{"exp", "nbf", "iat"} {
		if v, ok := raw[name]; ok && !is(v, number) {
			return claimError(name + " must be a number of seconds")
		}
	}
	for _, name := range []string{"sub", "iss", "jti", "sid", "pub"} {
		if v, ok := raw[name]; ok && !is(v, str) {
			return claimError(name + " must be a string")
		}
	}
	if v, ok := raw["aud"]; ok {
		var aud jwt.ClaimStrings
		if err := json.Unmarshal(v, &aud); err != nil {
			return claimError("aud must be a string or a list of strings")
		}
	}
	if v, ok := raw["roles"]; ok {
		var roles []string
		if err := json.Unmarshal(v, &roles); err != nil {
			return claimError("roles must be a list of strings")
		}
	}
	// A profile claim that is no string is no profile: it is left out,
	// and a reader keeps the name and picture already known.
	for _, name := range []string{"name", "picture"} {
		if v, ok := raw[name]; ok && !is(v, str) {
			delete(raw, name)
			stripped, err := json.Marshal(raw)
			if err != nil {
				return claimError("claims are malformed")
			}
			b = stripped
		}
	}
	type plain Claims // without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return claimError("claims are malformed")
	}
	*c = Claims(p)
	return nil
}

// errCritical is the error of a token with a crit header: it names
// extensions the server must understand to accept it, and it understands
// none (RFC 7515, 4.1.11).
var errCritical = errors.New("the token needs header extensions (crit) this server does not understand")

// describe returns what is wrong with a token that did not verify, in
// words a client reads rather than the JWT library's.
func describe(err error) string {
	var ce claimError
	switch {
	case errors.As(err, &ce):
		return "the token's " + ce.Error()
	case errors.Is(err, errCritical):
		return errCritical.Error()
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the token is not a well-formed JWT"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		// The parser refused the token's alg before any key was tried.
		return "the token is signed with an algorithm this server does not accept"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "the token's signature does not verify"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "the token is signed with an algorithm or a key this server does not accept"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "the token lacks a claim this server requires (exp, and iss and aud when configured)"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token says it was issued in the future"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the token is from an issuer this server does not accept"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token is for another audience"
	}
	return "the token is invalid"
}

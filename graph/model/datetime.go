package model

import (
	"fmt"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/storage"
)

// dateTimeLayout is RFC 3339 in UTC with exactly three fractional digits, so
// clients can compare the strings as well as parse them.
const dateTimeLayout = "2006-01-02T15:04:05.000Z"

// MarshalDateTime writes t as an RFC 3339 string in UTC with milliseconds.
// The zero time is written as null: it means "not set", as for the
// publication time of a draft.
func MarshalDateTime(t time.Time) graphql.Marshaler {
	if t.IsZero() {
		return graphql.Null
	}
	return graphql.MarshalString(t.UTC().Format(dateTimeLayout))
}

// UnmarshalDateTime reads an RFC 3339 string with an offset and returns it
// in UTC. It returns an error wrapping storage.ErrInvalidInput for anything
// else, so the client gets BAD_USER_INPUT.
func UnmarshalDateTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("%w: DateTime must be an RFC 3339 string, got %T", storage.ErrInvalidInput, v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: DateTime must be an RFC 3339 string, got %s", storage.ErrInvalidInput, strconv.Quote(s))
	}
	return t.UTC(), nil
}

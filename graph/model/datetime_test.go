package model

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

func TestMarshalDateTime(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"UTC with milliseconds", time.Date(2024, 5, 1, 9, 30, 0, 123456789, time.UTC), `"2024-05-01T09:30:00.123Z"`},
		{"whole seconds keep three digits", time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC), `"2024-05-01T09:30:00.000Z"`},
		{"other zones become UTC", time.Date(2024, 5, 1, 11, 30, 0, 0, time.FixedZone("CEST", 2*3600)), `"2024-05-01T09:30:00.000Z"`},
		{"zero time is null", time.Time{}, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			MarshalDateTime(tt.in).MarshalGQL(&b)
			if b.String() != tt.want {
				t.Errorf("got %s, want %s", b.String(), tt.want)
			}
		})
	}
}

func TestUnmarshalDateTime(t *testing.T) {
	want := time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC)
	for _, in := range []string{"2024-05-01T09:30:00Z", "2024-05-01T09:30:00.000Z", "2024-05-01T11:30:00+02:00"} {
		got, err := UnmarshalDateTime(in)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("UnmarshalDateTime(%q) = %v, %v; want %v in UTC", in, got, err, want)
		}
	}
}

func TestUnmarshalDateTimeRejectsOtherInput(t *testing.T) {
	for _, in := range []any{"2024-05-01", "2024-05-01 09:30:00", "yesterday", "", 1714555800, nil} {
		if _, err := UnmarshalDateTime(in); !errors.Is(err, storage.ErrInvalidInput) {
			t.Errorf("UnmarshalDateTime(%#v) error = %v, want ErrInvalidInput", in, err)
		}
	}
}

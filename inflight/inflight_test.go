package inflight

import (
	"context"
	"errors"
	"testing"
)

// TestBudget checks what a budget of 800 bytes admits without waiting: a
// large reservation at most three quarters of it, then small ones the
// rest, charges past a reservation while there is room, and everything
// given back when requests end.
func TestBudget(t *testing.T) {
	b := NewBudget(800, 0)
	start := func() (context.Context, *Meter) { return Start(context.Background(), b, 1000) }

	ctx1, m1 := start()
	if err := Reserve(ctx1, 5000); err != nil { // cut to 600
		t.Fatalf("a large reservation alone: %v", err)
	}
	ctx2, m2 := start()
	if err := Reserve(ctx2, 150); !errors.Is(err, ErrBusy) {
		t.Errorf("a second large reservation: %v, want ErrBusy", err)
	}
	if err := Answer(ctx2, 1); !errors.Is(err, ErrBusy) {
		t.Errorf("a refused request's charge: %v, want ErrBusy", err)
	}
	ctx3, m3 := start()
	if err := Reserve(ctx3, 100); err != nil {
		t.Errorf("a small reservation beside it: %v", err)
	}
	if err := Load(ctx3, 200); err != nil { // 100 more than reserved: 800 in all
		t.Errorf("a charge that fits: %v", err)
	}
	if err := Load(ctx3, 1); !errors.Is(err, ErrBusy) {
		t.Errorf("a charge past the budget: %v, want ErrBusy", err)
	}
	for _, m := range []*Meter{m1, m2, m3} {
		m.Done()
	}
	if u := b.Used(); u != 0 {
		t.Errorf("used %d once all ended, want 0", u)
	}

	ctx4, m4 := Start(context.Background(), nil, 1000) // an answer's limit alone
	defer m4.Done()
	if err := Answer(ctx4, 1000); err != nil {
		t.Errorf("an answer at its limit: %v", err)
	}
	if err := Answer(ctx4, 1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an answer past its limit: %v, want ErrTooLarge", err)
	}
	if err := Load(ctx4, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a load after it: %v, want ErrTooLarge", err)
	}
}

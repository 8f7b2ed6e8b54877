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

// TestShare: a publication's share of a budget of 800 bytes holds at
// most its 400 bytes, whatever the budget has left, and another share
// is served from the rest; what a share's requests give back returns to
// both.
func TestShare(t *testing.T) {
	b := NewBudget(800, 0)
	a, other := b.Share(400), b.Share(400)
	ctxA, mA := Start(context.Background(), a, 0)
	if err := Reserve(ctxA, 80); err != nil {
		t.Fatalf("a reservation of a share: %v", err)
	}
	if err := Load(ctxA, 400); err != nil { // the whole share
		t.Errorf("a charge up to the share: %v", err)
	}
	if err := Load(ctxA, 1); !errors.Is(err, ErrBusy) {
		t.Errorf("a charge past the share: %v, want ErrBusy", err)
	}
	ctxA2, mA2 := Start(context.Background(), a, 0)
	if err := Reserve(ctxA2, 50); !errors.Is(err, ErrBusy) {
		t.Errorf("a reservation past the share, the budget half free: %v, want ErrBusy", err)
	}
	ctxB, mB := Start(context.Background(), other, 0)
	if err := Reserve(ctxB, 80); err != nil {
		t.Errorf("another share's reservation: %v", err)
	}
	if err := Load(ctxB, 300); err != nil {
		t.Errorf("another share's charge: %v", err)
	}
	if got := b.Used(); got != 400+300 {
		t.Errorf("budget used = %d, want 700", got)
	}
	for _, m := range []*Meter{mA, mA2, mB} {
		m.Done()
	}
	if b.Used() != 0 || a.Used() != 0 || other.Used() != 0 {
		t.Errorf("after the requests: %d, %d, %d held, want none", b.Used(), a.Used(), other.Used())
	}
}

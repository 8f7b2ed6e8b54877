package webhooks_test

import (
	"fmt"
	"testing"

	"github.com/blogql/blog/storage"
)

// BenchmarkHandleEvent measures an event handled until its deliveries are
// received and recorded (the outbox item written, the signed POST
// answered, the attempt and the webhook's success written), to one
// webhook and to ten at once.
func BenchmarkHandleEvent(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("webhooks=%d", n), func(b *testing.B) {
			e := newEnv(b)
			r := newReceiver(b)
			for range n {
				e.create(r.URL, storage.EventPostPublished)
			}
			i := 0
			for b.Loop() {
				i++
				e.handle(e.published(fmt.Sprintf("%032x", i)))
			}
			if got := len(r.deliveries()); got != n*i {
				b.Fatalf("%d deliveries, want %d", got, n*i)
			}
		})
	}
}

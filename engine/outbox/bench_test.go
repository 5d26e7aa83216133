package outbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agenttree/agenttree/engine/outbox"
)

// The costs the controller pays per issue and per tick over files: a
// message put, the pending ones read (the due set reads every changed
// issue's), a box with nothing to carry (most issues, every tick), and one
// message carried to its recipient.
func BenchmarkOutboxFiles(b *testing.B) {
	ctx := context.Background()
	send := func(context.Context, outbox.Message) error { return nil }
	b.Run("Put", func(b *testing.B) {
		box := outbox.Open(filepath.Join(b.TempDir(), "outbox"))
		box.KeepSent = 1
		for i := 0; b.Loop(); i++ {
			if _, err := box.Put(ctx, outbox.Message{Key: fmt.Sprint(i), Text: "hello"}); err != nil {
				b.Fatal(err)
			}
			if i%50 == 49 { // keys are looked up among all: keep the box small
				if _, err := box.Deliver(ctx, send, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("Pending/5", func(b *testing.B) {
		box := outbox.Open(filepath.Join(b.TempDir(), "outbox"))
		for range 5 {
			if _, err := box.Put(ctx, outbox.Message{Text: "hello"}); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			if p, err := box.Pending(); err != nil || len(p) != 5 {
				b.Fatal(len(p), err)
			}
		}
	})
	b.Run("Carry/none", func(b *testing.B) {
		box := outbox.Open(filepath.Join(b.TempDir(), "outbox"))
		for b.Loop() {
			if _, err := box.Deliver(ctx, send, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Carry/one", func(b *testing.B) {
		box := outbox.Open(filepath.Join(b.TempDir(), "outbox"))
		box.KeepSent = 1
		for b.Loop() {
			if _, err := box.Put(ctx, outbox.Message{Text: "hello"}); err != nil {
				b.Fatal(err)
			}
			if d, err := box.Deliver(ctx, send, nil); err != nil || len(d) != 1 {
				b.Fatal(len(d), err)
			}
		}
	})
}

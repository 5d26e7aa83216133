package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
)

// BenchmarkTickWithNothingDue is a tick over n issues none of which is
// due, their files settled, each tick statting every issue's files or
// only those the watch of the issues' files named (none): the idle tick
// of docs/ARCHITECTURE.md §6.
//
//	go test -run '^$' -bench TickWithNothingDue -benchtime 50x ./controller
func BenchmarkTickWithNothingDue(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		r := newRig(b, dueConfig)
		r.c.wall = func() time.Time { return time.Now().Add(time.Hour) }
		e := r.engine(b)
		for range n {
			iss, err := e.Create(context.Background(), engine.NewIssue{Title: "x", Stage: "work"})
			require.NoError(b, err)
			for _, m := range e.Messages(iss) {
				r.c.markQueued(iss.ID, m.Key)
			}
		}
		for _, watch := range []bool{false, true} {
			name := fmt.Sprintf("issues=%d/stat-all", n)
			if watch {
				name = fmt.Sprintf("issues=%d/watch", n)
			}
			b.Run(name, func(b *testing.B) {
				r.c.dues = nil
				if watch {
					b.Cleanup(r.c.WatchIssues(context.Background()))
				}
				ctx := context.Background()
				for range 2 { // the first reads every issue
					_, err := r.c.Tick(ctx)
					require.NoError(b, err)
				}
				for b.Loop() {
					sum, err := r.c.Tick(ctx)
					if err != nil || sum.Due != 0 {
						b.Fatalf("a tick with %d due: %v", sum.Due, err)
					}
				}
			})
		}
	}
}

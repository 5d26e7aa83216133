package tmux

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkDeliveryCheck is what the check of a pane's program adds to a
// delivery: reading the pane's state (one tmux command, which every
// delivery made before) against reading it and checking its program
// (the kernel's view of the pane's process group), side by side.
//
//	go test -run x -bench DeliveryCheck ./sessions/tmux/
func BenchmarkDeliveryCheck(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux is not installed")
	}
	dir, err := os.MkdirTemp("", "tmux-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "sock")
	if out, err := exec.Command("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "agent", "sh", "-c", "exec cat").CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	defer exec.Command("tmux", "-S", sock, "kill-server").Run()
	c := &Client{Socket: sock}
	ctx := context.Background()
	b.Run("pane state", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.paneState(ctx, "agent"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pane state and program", func(b *testing.B) {
		for b.Loop() {
			st, err := c.paneState(ctx, "agent")
			if err != nil {
				b.Fatal(err)
			}
			if err := st.program.typable(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("program alone", func(b *testing.B) {
		st, err := c.paneState(ctx, "agent")
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := st.program.typable(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

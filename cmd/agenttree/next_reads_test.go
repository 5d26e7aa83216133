package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/testpipeline"
)

// One `next` reads the issue once: issue.yaml and events.jsonl are each
// opened for reading once, under the issue's lock, which the write that
// follows relies on. It read each three times (a person's) or twice (an
// agent's): without the lock to see who may act, and again under it.
// Counted with strace, from the system calls of the real process.
func TestNextReadsTheIssueOnce(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (.ci/run installs it)")
	}
	if out, err := exec.Command(strace, "-f", "-qq", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		// A container whose seccomp profile refuses ptrace.
		t.Skipf("strace cannot trace here: %v: %s", err, out)
	}
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	for _, tt := range []struct {
		name string
		env  []string
	}{
		{name: "a person", env: processEnv()},
		{name: "an agent", env: processEnv("AGENTTREE_ROLE=developer")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := w.create(t, "Add login page", "--stage", "implement.code")
			w.writeDoc(t, id, "notes.md", notesDone)
			trace := filepath.Join(t.TempDir(), "trace")
			cmd := w.command(tt.env, "next", "-i", itoa(id))
			cmd.Args = append([]string{strace, "-f", "-qq", "-o", trace, "-e", "trace=openat,open", cmd.Path}, cmd.Args[1:]...)
			cmd.Path = strace
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Equal(t, "implement.feedback", w.issue(t, id).Stage, "%s", out)

			data, err := os.ReadFile(trace)
			require.NoError(t, err)
			reads := map[string]int{}
			for _, line := range strings.Split(string(data), "\n") {
				for _, name := range []string{"issue.yaml", "events.jsonl"} {
					if strings.Contains(line, filepath.Join(w.hostDir(id), name)+`"`) && strings.Contains(line, "O_RDONLY") {
						reads[name]++
					}
				}
			}
			assert.Equal(t, map[string]int{"issue.yaml": 1, "events.jsonl": 1}, reads, "opened for reading")
		})
	}
}

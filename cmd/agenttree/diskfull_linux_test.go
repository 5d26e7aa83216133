package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/ostest"
)

// A state directory on a disk that fills up, or turns read-only, while
// agenttree writes to it (docs/RELIABILITY.md): each command that cannot
// write says so and what to do, and leaves the state as it was; the
// controller keeps running and goes on once the disk takes writes again.
// The disk is a tmpfs of a few MiB mounted over the rig's `_agenttree`,
// which needs root, as CI runs.

// TestAFullDiskRefusesEachWriteWhole runs `issue create` and the agent's
// `next` with no room left, then one page, two, ... until each succeeds:
// the write runs out of space at each point it can. Every failure names
// the disk and what to do and leaves every file of the state as it was.
func TestAFullDiskRefusesEachWriteWhole(t *testing.T) {
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	state := filepath.Join(r.dir, "_agenttree")
	ostest.Tmpfs(t, state, 4<<20)

	sweep := func(what string, cmd func() cliResult) cliResult {
		for free := 0; free < 64*ostest.PageSize; free += ostest.PageSize {
			before := snapshot(t, state)
			filler := ostest.Fill(t, state, free)
			res := cmd()
			require.NoError(t, os.Remove(filler))
			if res.code == exitOK {
				t.Logf("%s: refused with %d bytes free and less, done with %d", what, free-ostest.PageSize, free)
				require.Positive(t, free, "%s succeeded on a full disk: the test fills nothing", what)
				return res
			}
			out := res.stdout + res.stderr
			require.Equal(t, int(exitcode.Waiting), res.code, "%s with %d bytes free: nothing changed, a person acts: %s", what, free, out)
			require.Contains(t, out, "is full (no space left on device): free space on it, then run the command again",
				"%s with %d bytes free: %s", what, free, out)
			assert.Equal(t, before, snapshot(t, state), "%s with %d bytes free changed the state: %s", what, free, out)
			v := r.run(t, humanEnv, "verify")
			require.Equal(t, exitOK, v.code, "verify after %s with %d bytes free: %s%s", what, free, v.stdout, v.stderr)
		}
		require.FailNow(t, what+" never succeeded")
		return cliResult{}
	}

	created := sweep("issue create", func() cliResult {
		return r.run(t, humanEnv, "issue", "create", "Add search", "--json")
	})
	assert.Contains(t, created.stdout, `"id": 2`, "the id refused is given to the issue created")
	sweep("next", func() cliResult { return r.run(t, agentEnv, "next") })
	assert.Equal(t, "pr_ready", r.issue(t, id).Stage)
	assert.Equal(t, 2, r.issue(t, id).Version, "one move, made once")
}

// TestTheControllerWaitsOutADiskThatTakesNoWrites starts the controller
// with a PR to open while the issues' disk is full, then makes the disk
// read-only, then writable and full again: at each the controller says
// why it cannot go on, writes nothing of the issue's, and keeps running;
// once there is room, it finds the PR it opened (or opens it), once, and
// moves the issue on.
func TestTheControllerWaitsOutADiskThatTakesNoWrites(t *testing.T) {
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	r.fixCI(t, id)
	// The issues' directory alone: the controller holds its own lock
	// open for writing, and Linux makes no disk read-only under a
	// writer. The PRs' records stay on a disk that takes writes, as when
	// the state spans disks.
	state := filepath.Join(r.dir, "_agenttree", "host", "issues")
	ostest.Tmpfs(t, state, 4<<20)
	before := snapshot(t, state)
	filler := ostest.Fill(t, state, 0)
	ctl := r.startController(t)

	says := func(what string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Count(r.logText(t), what) == 1 },
			settleWithin, lookEvery, "the controller says once: %s", what)
		assert.Nil(t, ctl.ProcessState, "the controller keeps running")
		assert.Equal(t, before, snapshot(t, state), "nothing written")
		// The PR may be open already: its record is on the other disk.
		assert.LessOrEqual(t, r.prs(t), 1)
	}
	says("is full (no space left on device): free space on it")
	ostest.Remount(t, state, "ro")
	says("is read-only (read-only file system): make it writable")
	ostest.Remount(t, state, "rw")
	require.Eventually(t, func() bool { return strings.Count(r.logText(t), "is full (no space left on device)") == 2 },
		settleWithin, lookEvery, "the controller says again that the disk is full")

	require.NoError(t, os.Remove(filler))
	r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
	assert.Equal(t, 1, r.prs(t), "one PR")
	assert.Equal(t, 1, strings.Count(r.logText(t), "the disk takes writes again"))
	stopController(t, ctl)
	v := r.run(t, humanEnv, "verify")
	require.Equal(t, exitOK, v.code, "%s%s", v.stdout, v.stderr)
}

// snapshot is every file under dir and its content, but the filler,
// the lock files and empty files.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err // directories, and the controller's socket
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// A lock file names its holder, rewritten in place; a file left
		// empty (a log made before its first line) holds nothing.
		if rel == ".filler" || strings.HasSuffix(rel, ".lock") || len(data) == 0 {
			return nil
		}
		files[rel] = string(data)
		return nil
	}))
	return files
}

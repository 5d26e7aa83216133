// Package proc starts child processes so that nothing they start outlives
// them by accident: each runs in a process group of its own, and a cancel
// or a timeout ends the whole group. It also runs a command as another
// OS user (AsUser) and tells how a process ended.
// Every child process agenttree starts (git, `run` hooks, CI) goes
// through it.
//
// On Windows a child gets a process group of its own too, so a Ctrl-C
// meant for agenttree does not reach it, but a cancel or a timeout kills
// the child alone, at once: what it started keeps running (ending a tree
// of processes there needs a job object, which this package does not
// make). Elsewhere without process groups (plan9, wasm) only the child is
// killed as well.
package proc

import (
	"os"
	"os/exec"
)

// Group makes cmd start in a process group of its own, and makes the
// cancellation of its context (exec.CommandContext) kill the whole group:
// a shell's children, git's hooks and ssh go with it (on Unix; on Windows
// only cmd's process is killed). Set cmd.WaitDelay as well, so that a
// process that left the group but holds cmd's output open cannot make
// Wait hang.
func Group(cmd *exec.Cmd) {
	group(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd, true) }
}

// GroupGraceful is Group, but cancelling first asks the group to stop
// (SIGTERM), so it can clean up; cmd.WaitDelay is how long it has before
// Wait kills cmd. Call KillGroup after Wait to end whatever of the group
// is left. Where there are no signals (Windows) there is no asking:
// cancelling kills cmd's process at once.
func GroupGraceful(cmd *exec.Cmd) {
	group(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd, false) }
}

// KillGroup kills what is left of the process group of cmd, a started
// command made with Group (on Windows: cmd's process, if it still runs).
// It is safe to call when the group is gone.
func KillGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return signalGroup(cmd, true)
}

// Detach makes cmd outlive the process that starts it, out of reach of a
// Ctrl-C or a hangup meant for that process: on Unix in a session of its
// own, on Windows in a process group of its own without a console. A
// Windows job that kills its processes when it closes still ends it.
// Where there are neither (plan9, wasm) it does nothing.
func Detach(cmd *exec.Cmd) { detach(cmd) }

// Alive reports whether a process with pid is running. A process that
// exists but belongs to another user counts; a zombie does not.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return alive(pid)
}

// ExitStatus is how ps ended as a shell reports it: the exit code, 128+N
// for a kill by signal N, and -1 when the process never ran.
func ExitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if sig, ok := signaled(ps); ok {
		return 128 + sig
	}
	return ps.ExitCode()
}

// PeakRSSKiB is the peak resident set size of an exited process in KiB,
// or 0 where the system does not report it.
func PeakRSSKiB(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	return peakRSSKiB(ps)
}

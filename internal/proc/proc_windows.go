//go:build windows

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Process creation flags and access rights the syscall package does not
// define; the values are those of golang.org/x/sys/windows, which this
// package does not import for four constants.
const (
	// detachedProcess (DETACHED_PROCESS) starts a console program without
	// a console, so no console event (Ctrl-C, Ctrl-Break, closing the
	// window) of the parent's reaches it.
	detachedProcess = 0x00000008
	// processQueryLimitedInformation (PROCESS_QUERY_LIMITED_INFORMATION)
	// is the least access that reads an exit code, granted for more
	// processes than PROCESS_QUERY_INFORMATION.
	processQueryLimitedInformation = 0x00001000
	// stillActive (STILL_ACTIVE) is the exit code of a running process.
	stillActive = 259
)

// group starts cmd in a new process group, which makes the child ignore a
// Ctrl-C typed at the caller's console: the caller decides, by cancelling,
// when the child ends. Windows cannot end a process group: ending a child
// and everything it started needs a job object, which this package does
// not make. signalGroup kills the process alone.
func group(cmd *exec.Cmd) { addFlags(cmd, syscall.CREATE_NEW_PROCESS_GROUP) }

// detach starts cmd in a new process group without a console. Windows
// does not end a child with its parent, so it outlives the caller, unless
// the caller runs in a job that kills its processes when it closes
// (breaking away from it is not attempted).
func detach(cmd *exec.Cmd) { addFlags(cmd, syscall.CREATE_NEW_PROCESS_GROUP|detachedProcess) }

func addFlags(cmd *exec.Cmd, flags uint32) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= flags
}

// signalGroup kills cmd's process, graceful or not: Windows has no
// SIGTERM to ask with, and no group to kill (see group). What the process
// started keeps running.
func signalGroup(cmd *exec.Cmd, _ bool) error { return killProcess(cmd) }

// alive opens the process and reads its exit code. A process that exists
// but may not be opened (another user's) counts as alive; one that exited
// but whose handle someone still holds does not. A process that exited
// with code 259 reads as running: Windows cannot tell the two apart.
func alive(pid int) bool {
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if errors.Is(err, syscall.ERROR_ACCESS_DENIED) {
		return true
	}
	if err != nil {
		return false
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == stillActive
}

// signaled is always false: a process killed on Windows ends with the exit
// code its killer chose (1 from os.Process.Kill), not a signal.
func signaled(*os.ProcessState) (int, bool) { return 0, false }

// peakRSSKiB is 0: Windows keeps the peak working set of a process only
// while a handle to it is open, and os.ProcessState does not report it.
func peakRSSKiB(*os.ProcessState) int64 { return 0 }

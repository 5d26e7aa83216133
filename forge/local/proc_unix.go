//go:build unix

package local

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// ownGroup tells the CI runner that its process group is its own (see
// detach), so it may signal the whole group.
const ownGroup = "1"

// detach puts the CI runner in a session of its own: it outlives the
// agenttree command that started it, and the terminal's Ctrl-C or hangup
// for that command does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// processAlive reports whether a process with pid is running. EPERM means
// it exists but belongs to someone else, which still counts. A zombie
// does not: a runner whose starter exited is reaped by init, but a
// container without a real init leaves it a zombie forever.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reads the process state from /proc (Linux); elsewhere it cannot
// tell and says no.
func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain them.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return false
	}
	state := data[i+2]
	return state == 'Z' || state == 'X'
}

//go:build unix

package gitx

import (
	"os/exec"
	"syscall"
)

// killGroup makes cancellation kill git and everything it started (hooks,
// ssh, aliases), which would otherwise outlive it and hold its pipes.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

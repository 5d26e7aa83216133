//go:build unix

package local

import (
	"os/exec"
	"syscall"
)

// killGroup makes cancellation kill the CI shell and everything it started;
// test runners and servers it spawned would otherwise outlive the timeout.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

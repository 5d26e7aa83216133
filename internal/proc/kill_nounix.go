//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// killProcess kills cmd's process alone, where there is no process group
// to signal. A process that has already been waited for reports
// os.ErrProcessDone, as signalGroup does on Unix when the group is gone.
func killProcess(cmd *exec.Cmd) error {
	err := cmd.Process.Kill()
	if err != nil && cmd.ProcessState != nil {
		return os.ErrProcessDone
	}
	return err
}

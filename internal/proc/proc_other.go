//go:build !unix && !windows

package proc

import (
	"os"
	"os/exec"
)

// Without process groups (plan9, wasm), only the process itself is
// stopped; what it started may outlive it.
func group(*exec.Cmd) {}

func detach(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, _ bool) error { return killProcess(cmd) }

// alive asks the system for the process; where that cannot tell (plan9,
// wasm), a lost process is noticed by its age instead.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

func signaled(*os.ProcessState) (int, bool) { return 0, false }

func peakRSSKiB(*os.ProcessState) int64 { return 0 }

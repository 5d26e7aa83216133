//go:build unix

package load_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, in user and system mode.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

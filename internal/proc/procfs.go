package proc

import "errors"

// ErrNoProcfs: this system has no /proc to read processes from (not
// Linux); callers fall back to what they can learn otherwise.
var ErrNoProcfs = errors.New("no /proc on this system")

// Info is what the kernel says of a running process (Linux /proc).
type Info struct {
	PID, PPID int
	// PGRP is its process group, TPGID the foreground process group of
	// its controlling terminal (-1 when it has none).
	PGRP, TPGID int
	// Comm is the kernel's name of its program (at most 15 bytes); Exe
	// the path of the file it runs, "" when that cannot be read (another
	// user's process, without root).
	Comm, Exe string
	// UID is its real user.
	UID int
}

// Inspect reads what the kernel says of process pid.
func Inspect(pid int) (Info, error) { return inspect(pid) }

// InGroup lists the processes of process group pgrp.
func InGroup(pgrp int) ([]Info, error) { return inGroup(pgrp) }

// Stdin is what file descriptor 0 of process pid is open on ("/dev/pts/3"),
// "" when that cannot be read.
func Stdin(pid int) string { return stdin(pid) }

// Descends reports whether process pid is ancestor or one of its
// descendants.
func Descends(pid, ancestor int) (bool, error) {
	for range 1 << 12 { // a chain longer than this is a loop read mid-change
		if pid == ancestor {
			return true, nil
		}
		if pid <= 1 {
			return false, nil
		}
		info, err := inspect(pid)
		if err != nil {
			return false, err
		}
		pid = info.PPID
	}
	return false, nil
}

// Cmdline is the argument list process pid was started with (as it may
// have rewritten it since), nil when it cannot be read.
func Cmdline(pid int) []string { return cmdline(pid) }

package identity

import (
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Peer describes the process at the other end of a Unix socket connection
// from the kernel's credentials of the connection (SO_PEERCRED): its uid
// and pid cannot be forged by the peer. A peer whose mount namespace is
// not the listener's (or cannot be read) is in a container.
func Peer(conn *net.UnixConn) (Process, int, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return Process{}, 0, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Process{}, 0, err
	}
	if credErr != nil {
		return Process{}, 0, fmt.Errorf("SO_PEERCRED: %w", credErr)
	}
	p := Process{UID: int(cred.Uid)}
	mine, err := os.Readlink("/proc/self/ns/mnt")
	theirs, err2 := os.Readlink("/proc/" + strconv.Itoa(int(cred.Pid)) + "/ns/mnt")
	switch {
	case err != nil || err2 != nil:
		p.Container, p.Why = true, "its mount namespace cannot be read"
	case mine != theirs:
		p.Container, p.Why = true, "it runs in another mount namespace"
	}
	return p, int(cred.Pid), nil
}

//go:build !linux

package identity

import (
	"errors"
	"net"
)

// Peer is only known on Linux (SO_PEERCRED); elsewhere every connection
// is refused as of unknown origin.
func Peer(conn *net.UnixConn) (Process, int, error) {
	return Process{}, 0, errors.New("the peer of a socket connection is only known on Linux")
}

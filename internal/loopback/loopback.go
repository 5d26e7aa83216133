// Package loopback tells addresses only this machine reaches: the board,
// gh-forward's receiver and the config's checks of them keep to those
// unless a person opts out (docs/SECURITY.md).
package loopback

import (
	"net"
	"strings"
)

// Host reports whether host is a loopback address or localhost. An empty
// host is every interface: not loopback.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr reports whether addr, host:port, listens on loopback only.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && Host(host)
}

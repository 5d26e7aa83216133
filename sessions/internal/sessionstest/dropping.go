package sessionstest

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// DroppingSocket is a socket path beside server (a tmux server's socket)
// that closes its first drops connections unanswered, as a tmux server
// that is busy or exiting may, then is server's own socket (a hard link
// to it, moved over the path). With drops < 0 it never answers.
func DroppingSocket(t *testing.T, server string, drops int) string {
	t.Helper()
	path := filepath.Join(filepath.Dir(server), "dropping")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	// Closed, the listener must not remove what the path is by then.
	ln.SetUnlinkOnClose(false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; drops < 0 || n < drops; n++ {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
		link := path + ".link"
		if err := os.Link(server, link); err == nil {
			_ = os.Rename(link, path)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		_ = os.Remove(path)
	})
	return path
}

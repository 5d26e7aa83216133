package colour

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// terminal opens a pseudo-terminal's follower side: a real terminal for
// the painter to find.
func terminal(t *testing.T) *os.File {
	t.Helper()
	leader, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { leader.Close() })
	fd := int(leader.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	follower, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { follower.Close() })
	return follower
}

func TestColourOnATerminalUnlessNoColor(t *testing.T) {
	tty := terminal(t)
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{env: map[string]string{"TERM": "xterm"}, want: true},
		{env: map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, want: false},
		{env: map[string]string{"TERM": "dumb"}, want: false},
	} {
		p := For(tty, func(k string) string { return tt.env[k] })
		assert.Equal(t, tt.want, p.Good("x") != "x", "%v", tt.env)
	}
}

package controllercmd

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agenttree/agenttree/internal/syncbuf"
)

// openPTY is a pseudo-terminal: the program's end (a terminal, as a
// person's stdout is) and what shows on it.
func openPTY(t *testing.T) (tty *os.File, shown *syncbuf.Buffer) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { _ = ptmx.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("the pseudo-terminal cannot be opened here: %v", err)
	}
	t.Cleanup(func() { _ = tty.Close() })
	shown = &syncbuf.Buffer{}
	go func() {
		r := bufio.NewReader(ptmx)
		for {
			line, err := r.ReadString('\n')
			_, _ = shown.Write([]byte(strings.ReplaceAll(line, "\r\n", "\n")))
			if err != nil {
				return
			}
		}
	}()
	return tty, shown
}

// At a terminal, `controller --http` prints the board's URL on stdout
// as `agenttree board` does, and still never in its log.
func TestControllerShowsTheBoardURLAtATerminal(t *testing.T) {
	tty, shown := openPTY(t)
	w := newWorkspace(t, false)
	var log syncbuf.Buffer
	w.App.Out, w.App.ErrOut = tty, &log
	url, _, stop := runBoard(t, w.App)
	m := boardURLRE.FindStringSubmatch(url)
	require.NotNil(t, m, "the file holds the board's URL: %q", url)
	require.Eventually(t, func() bool { return strings.Contains(shown.String(), "board: "+url) }, 30*time.Second, 20*time.Millisecond,
		"the terminal shows the URL: %q", shown.String())
	stop()
	assert.NotContains(t, log.String(), m[1], "the login token is not in the controller's log")
}

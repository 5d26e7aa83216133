package outbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// The test binary, run with these variables, is another agenttree process
// using the box in boxEnv: it delivers its messages, appending each to the
// file in logEnv, or puts a message with the key in keyEnv and prints its
// ID.
const (
	boxEnv = "OUTBOX_TEST_BOX"
	logEnv = "OUTBOX_TEST_LOG"
	keyEnv = "OUTBOX_TEST_KEY"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(boxEnv); dir != "" {
		if err := actAsProcess(outbox.Open(dir)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func actAsProcess(b *outbox.Box) error {
	ctx := context.Background()
	if key := os.Getenv(keyEnv); key != "" {
		m, err := b.Put(ctx, outbox.Message{Key: key, Text: "from pid " + fmt.Sprint(os.Getpid())})
		fmt.Print(m.ID)
		return err
	}
	_, err := b.Deliver(ctx, appendTo(os.Getenv(logEnv)), nil)
	return err
}

// appendTo is a recipient that appends each message's text to a file
// shared by every deliverer, taking a moment as a real one does.
func appendTo(path string) outbox.SendFunc {
	return func(_ context.Context, m outbox.Message) error {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		time.Sleep(time.Millisecond)
		_, err = fmt.Fprintln(f, m.Text)
		return err
	}
}

// process starts the test binary as another process on dir.
func process(t *testing.T, dir string, env ...string) *exec.Cmd {
	t.Helper()
	bin, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), append(env, boxEnv+"="+dir)...)
	return cmd
}

func TestConcurrentDeliveriesSendEachMessageOnce(t *testing.T) {
	t.Parallel()
	b := newDirBox(t)
	var want []string
	for i := range 40 {
		want = append(want, fmt.Sprintf("message %02d", i))
	}
	put(t, b, want...)
	log := filepath.Join(t.TempDir(), "received")

	// Three processes and four goroutines deliver the same box at once.
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 3 {
		cmd := process(t, b.Dir(), logEnv+"="+log)
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	// A deliverer that waits out the lock's bound (30 s, on a machine
	// busy enough that one delivery of the box takes that long) gives up
	// with ErrLocked and delivers nothing: that is allowed; a message
	// sent twice or not at all is not.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, err := outbox.Open(b.Dir()).Deliver(context.Background(), appendTo(log), nil)
			if err != nil {
				assert.ErrorIs(t, err, atomicfile.ErrLocked)
			}
		})
	}
	wg.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			assert.Contains(t, outs[i].String(), atomicfile.ErrLocked.Error(), "%v", err)
		}
	}

	data, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, want, strings.Split(strings.TrimSpace(string(data)), "\n"), "each message once, in order")
	pending, err := b.Pending()
	require.NoError(t, err)
	assert.Empty(t, pending)
}

func TestConcurrentPutsOfOneKeyAddOneMessage(t *testing.T) {
	t.Parallel()
	b := newDirBox(t)
	outs := make([][]byte, 5)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			var err error
			outs[i], err = process(t, b.Dir(), keyEnv+"=review/42").Output()
			assert.NoError(t, err)
		})
	}
	wg.Wait()

	pending, err := b.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	for _, out := range outs {
		assert.Equal(t, pending[0].ID, string(out), "every process got the one message")
	}
}

package tmux

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// Pauses of a delivery. The settle pause lets the program in the pane take
// in a paste before Enter arrives: programs that read a paste in chunks
// would otherwise see Enter in the middle of it.
const (
	settleMin     = 150 * time.Millisecond
	settlePer100B = time.Millisecond
	settleMax     = 2 * time.Second
	// enterWait is how long the pane has to show an Enter taken, plus
	// settlePer100B of the text (a long paste takes its program a while
	// to take in, on a busy machine more), doubled for each retry; it is
	// read every pollEvery meanwhile. Too short a wait presses Enter again
	// on a program still reading, which it takes as an empty line.
	enterWait    = 500 * time.Millisecond
	enterRetries = 3
	pollEvery    = 25 * time.Millisecond
	// lockWait bounds the wait for another sender to finish with the pane:
	// a delivery takes seconds at most.
	lockWait = 30 * time.Second
	// probeLen is how much of the text the pane must show for a delivery
	// to count as confirmed.
	probeLen = 40
)

// Send types text into the pane target names (a pane id, a session name
// or session:window) and submits it, the way the most careful tools do:
//
//   - the pane id is resolved once and one sender at a time types into it
//     (a lock file in LockDir, shared by every process);
//   - a pane in copy mode (or another mode) is taken out of it with a
//     mode command, never with Escape, which the program would read;
//   - the text, stripped of control sequences (textsafe.Sanitize), goes to a
//     uniquely named tmux buffer from standard input and is pasted as one
//     bracketed paste, so newlines do not submit it early and nothing in
//     it is read as a tmux command;
//   - after a pause scaled by its length, the named Enter key submits it;
//   - the pane must then show the text and have taken the Enter (it
//     changed); Enter is pressed again, with backoff, while it has not.
//
// A missing session or pane is ErrNoSession and a pane that cannot take
// input ErrPaneBusy: nothing was typed. A delivery whose text was pasted
// but never shown submitted is ErrNotConfirmed.
func (c *Client) Send(ctx context.Context, target, text string) error {
	return c.SendTyped(ctx, target, text, nil)
}

// SendTyped is Send that calls typed, when not nil, once the text is in
// the pane and before Enter, with the name of the pane in this life of
// its program and server: a caller that records the message as typed
// there can finish a delivery cut short with Submit, rather than typing
// it twice. An error from typed stops the delivery before Enter.
func (c *Client) SendTyped(ctx context.Context, target, text string, typed func(into string) error) error {
	text = strings.TrimRight(textsafe.Sanitize(text), " \t\n")
	if text == "" {
		return fmt.Errorf("type into tmux pane %s: the message is empty once control characters are removed", target)
	}
	return c.atPane(ctx, target, "", func(pane, into string) error {
		if err := c.paste(ctx, pane, text); err != nil {
			return err
		}
		if typed != nil {
			if err := typed(into); err != nil {
				return fmt.Errorf("type into tmux pane %s: pasted, not submitted: %w", pane, err)
			}
		}
		if err := sleep(ctx, settle(len(text))); err != nil {
			return fmt.Errorf("type into tmux pane %s: pasted, not submitted: %w: %w", pane, ErrNotConfirmed, err)
		}
		if err := c.submit(ctx, pane, text); err != nil {
			return fmt.Errorf("type into tmux pane %s: %w", pane, err)
		}
		return nil
	})
}

// Submit presses Enter on text already typed into target (a delivery cut
// short between its paste and its Enter) and confirms it as Send does.
// An Enter on input already submitted sends an empty line, which agents'
// prompts ignore; a message left unsubmitted would never be read. into,
// when not empty, is the pane SendTyped typed the text into: a pane
// target names now that is not that one (the server or the program was
// started again since, and what was typed went with the old) is
// ErrNoSession, and no Enter is pressed.
func (c *Client) Submit(ctx context.Context, target, text, into string) error {
	text = strings.TrimRight(textsafe.Sanitize(text), " \t\n")
	return c.atPane(ctx, target, into, func(pane, _ string) error {
		if err := c.submit(ctx, pane, text); err != nil {
			return fmt.Errorf("submit in tmux pane %s: %w", pane, err)
		}
		return nil
	})
}

// atPane runs do on target's pane, resolved once, holding the pane's lock,
// with the pane ready for input (out of copy mode); do is told the pane's
// id and where it is (paneState.where). A pane that is not the one into
// names, when into is not empty, is ErrNoSession.
func (c *Client) atPane(ctx context.Context, target, into string, do func(pane, where string) error) error {
	st, err := c.paneState(ctx, target)
	if err != nil {
		return err
	}
	if into != "" && st.where() != into {
		return fmt.Errorf("tmux pane %s (%s) is not the pane the text was typed into (%s), gone with what was typed: %w", st.id, st.where(), into, ErrNoSession)
	}
	unlock, err := c.lockPane(ctx, st.id)
	if err != nil {
		return err
	}
	defer unlock()
	if err := c.readyForInput(ctx, st.id); err != nil {
		return err
	}
	return do(st.id, st.where())
}

// paste loads text into a buffer of its own and pastes it into pane as a
// bracketed paste (when the program asked for those), deleting the buffer.
func (c *Client) paste(ctx context.Context, pane, text string) error {
	buf := "agenttree-" + rand.Text()
	if _, err := c.run(ctx, strings.NewReader(text), "load-buffer", "-b", buf, "-"); err != nil {
		return fmt.Errorf("load the message into a tmux buffer: %w", err)
	}
	if _, err := c.run(ctx, nil, "paste-buffer", "-p", "-d", "-b", buf, "-t", pane); err != nil {
		// The buffer outlives a failed paste; do not leave the message in
		// the server, even when the caller gave up.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_, _ = c.run(cleanup, nil, "delete-buffer", "-b", buf)
		return fmt.Errorf("paste into tmux pane %s: %w", pane, err)
	}
	return nil
}

// submit presses Enter until pane shows it was taken: the pane changed. A pane that does not change in a while gets Enter
// again, and a longer while each time.
func (c *Client) submit(ctx context.Context, pane, text string) error {
	history := strings.Count(text, "\n") + 200
	typed, err := c.snapshot(ctx, pane, history)
	if err != nil {
		return fmt.Errorf("pasted, not submitted: %w: %w", ErrNotConfirmed, err)
	}
	for attempt := range enterRetries + 1 {
		if attempt > 0 {
			c.log().Debug("tmux pane did not take Enter; pressing it again", "pane", pane, "attempt", attempt+1)
		}
		// What reads the pane may have changed since the paste: Enter
		// too goes only to the agent's program (docs/SECURITY.md).
		if err := c.stillTheAgent(ctx, pane); err != nil {
			return fmt.Errorf("pasted, not submitted: %w", err)
		}
		if _, err := c.run(ctx, nil, "send-keys", "-t", pane, "Enter"); err != nil {
			return fmt.Errorf("pasted, not submitted: %w: %w", ErrNotConfirmed, err)
		}
		now, err := c.awaitChange(ctx, pane, typed, history, enterWaitFor(text)<<attempt)
		switch {
		case err != nil:
			return fmt.Errorf("%w: %w", ErrNotConfirmed, err)
		case now == typed:
			continue
		case !shows(now.text, probes(text)):
			// Taken, but not shown as typed: agents fold a long paste
			// into a line of their own ("[Pasted text +40 lines]").
			c.log().Debug("tmux pane took Enter without showing the message", "pane", pane)
		}
		return nil
	}
	return fmt.Errorf("%w: the pane did not change after Enter, pressed %d times", ErrNotConfirmed, enterRetries+1)
}

// enterWaitFor is the first wait for the pane to show that it took the
// Enter after text.
func enterWaitFor(text string) time.Duration {
	return enterWait + min(time.Duration(len(text)/100)*settlePer100B, settleMax)
}

// awaitChange reads pane until it differs from before or wait has passed,
// and returns what it read last.
func (c *Client) awaitChange(ctx context.Context, pane string, before snapshot, history int, wait time.Duration) (snapshot, error) {
	deadline := time.Now().Add(wait)
	for {
		if err := sleep(ctx, pollEvery); err != nil {
			return snapshot{}, err
		}
		now, err := c.snapshot(ctx, pane, history)
		if err != nil || now != before || time.Now().After(deadline) {
			return now, err
		}
	}
}

// snapshot is what a pane shows and where its cursor is: an Enter that
// only moves the cursor changed the pane all the same.
type snapshot struct{ text, cursor string }

func (c *Client) snapshot(ctx context.Context, pane string, history int) (snapshot, error) {
	text, err := c.Capture(ctx, pane, history)
	if err != nil {
		return snapshot{}, err
	}
	cursor, err := c.run(ctx, nil, "display-message", "-p", "-t", pane, "#{cursor_x},#{cursor_y},#{history_size}")
	if err != nil {
		return snapshot{}, fmt.Errorf("read the cursor of tmux pane %s: %w", pane, err)
	}
	return snapshot{text: text, cursor: cursor}, nil
}

// probes are the parts of text a pane showing it must contain, with runs
// of white space collapsed (a pane expands tabs, a program may wrap
// lines): the start of its first line, where callers put a message's
// marker, and its end, still on screen when the text is longer than the
// pane's history.
func probes(text string) []string {
	first := []rune(collapse(lines.First(text)))
	all := []rune(collapse(text))
	return []string{
		string(first[:min(len(first), probeLen)]),
		string(all[max(0, len(all)-probeLen):]),
	}
}

// shows reports whether the captured pane contains any of the probes.
func shows(capture string, probes []string) bool {
	capture = collapse(capture)
	for _, p := range probes {
		if p != "" && strings.Contains(capture, p) {
			return true
		}
	}
	return false
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// settle is the pause between pasting n bytes and pressing Enter.
func settle(n int) time.Duration {
	return min(settleMin+time.Duration(n/100)*settlePer100B, settleMax)
}

// lockPane takes the lock that makes c the only sender typing into pane.
func (c *Client) lockPane(ctx context.Context, pane string) (unlock func(), err error) {
	dir := c.LockDir
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("find a directory for tmux pane locks (set a lock directory): %w", err)
		}
		dir = filepath.Join(cache, "agenttree", "tmux")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the tmux pane lock directory: %w", err)
	}
	return atomicfile.Lock(ctx, filepath.Join(dir, c.lockName(pane)), lockWait, "tmux pane "+pane)
}

// lockName names the lock file of pane on c's server: pane ids are unique
// per server only, and a socket path does not fit in a file name.
func (c *Client) lockName(pane string) string {
	server := "default"
	if c.Socket != "" {
		abs, err := filepath.Abs(c.Socket)
		if err != nil {
			abs = c.Socket
		}
		sum := sha256.Sum256([]byte(abs))
		server = hex.EncodeToString(sum[:6])
	}
	return "pane-" + server + "-" + strings.TrimPrefix(pane, "%") + ".lock"
}

func (c *Client) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

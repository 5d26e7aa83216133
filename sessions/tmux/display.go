package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/textsafe"
)

// displayFor is how long a shown message stays on a person's status line:
// long enough to be read on coming back to the terminal, not so long that
// it hides the status line for good.
const displayFor = 30 * time.Second

// displayMax bounds what is shown: a status line is one line; the rest is
// in the log and `agenttree status`.
const displayMax = 500

// Display shows text on the status line of every client attached to
// session (tmux display-message), and returns how many it was shown to.
// Nothing is typed: a person's pane never receives keystrokes from
// agenttree (docs/SECURITY.md). text is shown as one line, without
// terminal controls, and with tmux's format characters escaped, so a `#(`
// in it runs nothing. No client attached is no error: zero shown.
func (c *Client) Display(ctx context.Context, session, text string) (int, error) {
	out, err := c.run(ctx, nil, "list-clients", "-t", exactSession(session), "-F", "#{client_name}")
	if err != nil {
		if errors.Is(err, ErrNoSession) {
			return 0, fmt.Errorf("show a message to session %s%s: %w", session, c.onServer(), err)
		}
		return 0, err
	}
	line := DisplayText(text)
	shown := 0
	var errs []error
	for _, client := range strings.Fields(out) {
		_, err := c.run(ctx, nil, "display-message", "-c", client, "-d", strconv.FormatInt(displayFor.Milliseconds(), 10), line)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		shown++
	}
	if shown == 0 && len(errs) > 0 {
		return 0, errors.Join(errs...)
	}
	return shown, nil
}

// DisplayText is text as display-message must get it to show it as it
// is: one bounded line with no terminal controls, every '#' doubled (tmux
// expands formats in the message: `#(cmd)` would run cmd), and a final ';'
// escaped (Arg).
func DisplayText(text string) string {
	return Arg(strings.ReplaceAll(textsafe.Line(text, displayMax), "#", "##"))
}

package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// Inbox is an issue's messages, as `agenttree inbox` shows them.
type Inbox struct {
	Issue int `json:"issue"`
	// Undelivered are the messages waiting for their recipient, oldest
	// first; Recent the latest delivered ones.
	Undelivered []outbox.Message `json:"undelivered"`
	Recent      []outbox.Message `json:"recent"`
}

// ReadInbox reads issue id's messages from its outbox: every undelivered
// one, and the last recent delivered.
func ReadInbox(box *outbox.Box, id, recent int) (Inbox, error) {
	v := Inbox{Issue: id, Undelivered: []outbox.Message{}, Recent: []outbox.Message{}}
	pending, err := box.Pending()
	if err != nil {
		return v, fmt.Errorf("read the outbox of issue %d: %w", id, err)
	}
	v.Undelivered = append(v.Undelivered, pending...)
	if recent <= 0 {
		return v, nil
	}
	// The last recent+len(pending) hold the last recent delivered ones.
	all, err := box.Recent(recent + len(pending))
	if err != nil {
		return v, fmt.Errorf("read the outbox of issue %d: %w", id, err)
	}
	for _, m := range all {
		if m.State == outbox.Sent {
			v.Recent = append(v.Recent, m)
		}
	}
	return v, nil
}

// Age is a duration for people: whole seconds, whole minutes past an hour.
func Age(d time.Duration) string {
	switch d = d.Round(time.Second); {
	case d <= 0:
		return "0s"
	case d < time.Hour:
		return d.String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// Inbox prints v as `inbox` does, ages as of now: what waits for its
// recipient, then the messages delivered lately.
func (p Printer) Inbox(v Inbox, now time.Time) {
	w := p.Out
	if len(v.Undelivered)+len(v.Recent) == 0 {
		fmt.Fprintf(w, "issue %d: no messages\n", v.Issue)
		return
	}
	fmt.Fprintf(w, "issue %d: %d undelivered, %d delivered lately\n", v.Issue, len(v.Undelivered), len(v.Recent))
	if len(v.Undelivered) > 0 {
		fmt.Fprintln(w, "undelivered:")
	}
	for _, m := range v.Undelivered {
		head := fmt.Sprintf("  %s, to the %s, queued %s ago", m.State, m.To, Age(now.Sub(m.Created)))
		if m.Attempts > 0 {
			head += fmt.Sprintf("; %d attempt(s), last: %s", m.Attempts, m.LastError)
		}
		printMessage(w, head, m)
	}
	if len(v.Recent) > 0 {
		fmt.Fprintln(w, "delivered:")
	}
	for _, m := range v.Recent {
		printMessage(w, fmt.Sprintf("  sent %s, to the %s", m.SentAt.Local().Format(time.DateTime), m.To), m)
	}
}

func printMessage(w io.Writer, head string, m outbox.Message) {
	if m.Kind != "" {
		head += " [" + m.Kind + "]"
	}
	body := strings.TrimLeft(head, " ")
	fmt.Fprintln(w, head[:len(head)-len(body)]+Safe(body))
	for _, l := range strings.Split(strings.TrimRight(textsafe.Sanitize(m.Text), "\n"), "\n") {
		fmt.Fprintln(w, "    "+l)
	}
}

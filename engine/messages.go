package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
)

// Outbox is issue id's queue of messages.
func (e *Engine) Outbox(id int) *outbox.Box {
	return outbox.Open(filepath.Join(e.Store.HostDir(id), "outbox"))
}

// queue puts messages hooks asked to send (send_message) in the issue's
// outbox, each keyed by its text and what it is about (scope: the head a
// watch acted on, else the issue's head), so a message asked for again —
// a pass run again after a crash, a failure policy on every pass — is
// queued once, and a different one is never mistaken for it.
func (e *Engine) queue(ctx context.Context, iss *issues.Issue, scope string, texts []string) error {
	box := e.Outbox(iss.ID)
	if scope == "" {
		scope = iss.Stage + "@" + iss.HeadSHA
	}
	for _, text := range texts {
		sum := sha256.Sum256([]byte(scope + "\x00" + text))
		key := "send-" + hex.EncodeToString(sum[:8])
		if _, err := box.Put(ctx, outbox.Message{Key: key, To: outbox.ToAgent, Kind: "message", Text: text}); err != nil {
			return err
		}
	}
	return nil
}

// Messages are what the issue's state says people and its agent must be
// told (notice.Book.Messages). The engine queues each history entry's
// messages as it writes the entry; the controller puts these in the
// outbox again on every pass, and a key already there adds nothing, so a
// message is queued exactly once whatever crashes.
func (e *Engine) Messages(iss *issues.Issue) []outbox.Message { return e.notices.Messages(iss) }

// queueEntries puts the messages of the history entries iss gained since
// it had before of them in its outbox, as they are written: a message is
// never lost to a move that follows before the controller looks.
func (e *Engine) queueEntries(ctx context.Context, iss *issues.Issue, before int) error {
	box := e.Outbox(iss.ID)
	for i := before; i < len(iss.History); i++ {
		for _, m := range e.notices.Entry(iss, i) {
			if _, err := box.Put(ctx, m); err != nil {
				return err
			}
		}
	}
	return nil
}

package notice

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
)

// Queue puts messages hooks asked to send (send_message) in box, iss's
// outbox, each keyed by its text and what it is about (scope: the head a
// watch acted on, else the issue's head), so a message asked for again —
// a pass run again after a crash, a failure policy on every pass — is
// queued once, and a different one is never mistaken for it.
func Queue(ctx context.Context, box *outbox.Box, iss *issues.Issue, scope string, texts []string) error {
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

// QueueEntries puts in box, iss's outbox, the messages of the history
// entries iss gained since it had before of them, as they are written: a
// message is never lost to a move that follows before the controller
// looks. It puts again those of the last entry before them that has any:
// a writer killed after it wrote an entry and before it queued its
// messages leaves them to the controller, which queues only the latest
// entry's, and this write is the latest now. A key already in the box
// adds nothing.
func (b *Book) QueueEntries(ctx context.Context, box *outbox.Box, iss *issues.Issue, before int) error {
	start := min(before, len(iss.History))
	var msgs []outbox.Message
	for i := start - 1; i >= 0 && len(msgs) == 0; i-- {
		msgs = b.Entry(iss, i)
	}
	for i := start; i < len(iss.History); i++ {
		msgs = append(msgs, b.Entry(iss, i)...)
	}
	for _, m := range msgs {
		if _, err := box.Put(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

package outbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// State is where a message is on its way.
type State string

const (
	// Pending: not sent yet, or a send failed before anything reached the
	// recipient.
	Pending State = "pending"
	// Delivering: a send started and its outcome is not known (agenttree
	// stopped during it, or the send could not confirm it). The next
	// delivery asks whether it arrived before sending it again.
	Delivering State = "delivering"
	// Typed: placed before the recipient (typed into its pane) and not yet
	// handed over (Enter): the next delivery hands it over, never types it
	// again.
	Typed State = "typed"
	// Sent: delivered.
	Sent State = "sent"
	// Untaken: typed, and handed over (Enter) again and again without the
	// recipient ever showing it took it (its program ignores input). It
	// stays in the outbox for people to see, and is not pressed again: a
	// stray Enter can answer a prompt.
	Untaken State = "untaken"
)

// Recipient is who a message is for.
type Recipient string

const (
	// ToAgent: the agent working on the issue, in the session.
	ToAgent Recipient = "agent"
	// ToManager: the person running the pipeline: the log, and shown on
	// the status line of the manager session (never typed into it).
	ToManager Recipient = "manager"
	// ToNotify: people, through the config's notify.command (a chat
	// webhook, a desktop notification).
	ToNotify Recipient = "notify"
)

// Message is one message in a box.
type Message struct {
	// ID is unique and sorts in the order messages were put.
	ID string `json:"id"`
	// Key, when set, makes Put idempotent: a message with a key already
	// in the box is not added again.
	Key string `json:"key,omitempty"`
	// To is the recipient; empty means ToAgent.
	To Recipient `json:"to"`
	// Kind says what the message is about (step_back, rebase, review,
	// escalation, ...), for people reading the box.
	Kind     string    `json:"kind,omitempty"`
	Text     string    `json:"text"`
	Created  time.Time `json:"created"`
	State    State     `json:"state"`
	Attempts int       `json:"attempts,omitempty"`
	// HandOvers counts the tries to hand over the message once typed.
	HandOvers int `json:"hand_overs,omitempty"`
	// TypedInto, for a Typed message, names where it was typed, as the
	// courier's send said (a pane of one tmux server's life): its
	// hand-over goes there and nowhere else. Empty: not said.
	TypedInto string    `json:"typed_into,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	SentAt    time.Time `json:"sent_at,omitzero"`
}

// Marker is a short token unique to m, for the sender to put at the start
// of the text it types: finding it in the recipient's pane later tells
// whether a delivery that was cut short arrived.
func Marker(m Message) string {
	sum := sha256.Sum256([]byte(m.ID))
	return "[agenttree " + hex.EncodeToString(sum[:4]) + "]"
}

func (m Message) validate() error {
	switch {
	case strings.TrimSpace(m.Text) == "":
		return errors.New("the message has no text")
	case m.To != ToAgent && m.To != ToManager && m.To != ToNotify:
		return fmt.Errorf("the message is for %q; it can be for %q, %q or %q", m.To, ToAgent, ToManager, ToNotify)
	}
	return nil
}

// idTime is the time part of an ID: fixed width, so IDs sort by time.
const idTime = "20060102T150405.000000000Z"

// newID makes the ID of a message put at t: the time, then seq (messages
// put in the same clock tick by one Box keep their order), then random
// hex (two processes in the same tick do not collide).
func newID(t time.Time, seq uint32) string {
	var r [3]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	return fmt.Sprintf("%s-%04x-%s", t.UTC().Format(idTime), seq&0xffff, hex.EncodeToString(r[:]))
}

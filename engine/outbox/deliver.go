package outbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrMaybeDelivered is what a send's error wraps when the message may
// have reached its recipient all the same. The message then stays
// Delivering, and the next delivery asks Seen before sending it again.
var ErrMaybeDelivered = errors.New("the message may have been delivered")

// SendFunc delivers one message in one step. Its text should start with
// Marker(m).
type SendFunc func(ctx context.Context, m Message) error

// SeenFunc reports whether m reached its recipient, for a delivery whose
// outcome is not known: typically whether the recipient's pane shows
// Marker(m); into is where it was seen, as Courier.Send's typed names
// it (empty: not said).
type SeenFunc func(ctx context.Context, m Message) (into string, seen bool, err error)

// Courier carries messages in two steps, typing and handing over (paste,
// then Enter), so that a delivery cut short in between is finished, never
// repeated nor left half done.
type Courier struct {
	// Send delivers m; between typing and handing over it calls typed
	// with where it typed m (empty: not said), which records m as Typed
	// there (an error from typed stops it there).
	Send func(ctx context.Context, m Message, typed func(into string) error) error
	// Seen reports whether m, whose delivery was cut short before it was
	// recorded as typed, was typed all the same; nil: never.
	Seen SeenFunc
	// Submit hands over m, typed before into m.TypedInto; nil: typed
	// counts as delivered. A place that is not the one m was typed into
	// (its pane gone, another in its stead) is ErrGone: pressing Enter
	// there would hand over nothing.
	Submit func(ctx context.Context, m Message) error
	// Takes, when set, says which recipients this courier carries to;
	// the others' messages are left, untried, for another.
	Takes func(Recipient) bool
}

// Deliver is Carry with a one-step send: seen decides whether a message
// cut short arrived.
func (b *Box) Deliver(ctx context.Context, send SendFunc, seen SeenFunc) (delivered []Message, err error) {
	return b.Carry(ctx, Courier{Send: func(ctx context.Context, m Message, _ func(string) error) error { return send(ctx, m) }, Seen: seen})
}

// Carry sends the box's undelivered messages, oldest first, and returns
// those delivered, and those it gave up on in this run (Untaken). One delivery runs at a time per box, across processes;
// another waits for it.
//
// Each message is marked Delivering, typed, marked Typed, handed over,
// then marked Sent. A message found Typed is handed over (Submit); one
// found Delivering (agenttree stopped during its send, or the send
// returned ErrMaybeDelivered) is checked with Seen: typed, it is handed
// over; not, it is sent.
//
// Messages arrive in order for each recipient: a send that fails records
// the attempt and the error and holds back that recipient's later
// messages until the next delivery, while other recipients' go on (people
// are told of an escalation even when the agent's session is gone).
func (b *Box) Carry(ctx context.Context, c Courier) (delivered []Message, err error) {
	if b.place.Idle(ctx) || !b.carries(ctx, c) {
		return nil, nil
	}
	unlock, err := b.place.Lock(ctx, deliverLock, lockWait)
	if err != nil {
		return nil, err
	}
	defer unlock()

	queue, err := b.pending(ctx)
	if err != nil {
		return nil, err
	}
	held := map[Recipient]bool{}
	var errs []error
	for _, m := range queue {
		if err := ctx.Err(); err != nil {
			return delivered, errors.Join(append(errs, fmt.Errorf("stopped delivering the messages in %s: %w", b.place, err))...)
		}
		if held[m.To] || m.State == Untaken || (c.Takes != nil && !c.Takes(m.To)) {
			continue // an untaken message holds nobody up: it is given up
		}
		m, err := b.deliver(ctx, m, c)
		if err != nil {
			held[m.To] = true
			errs = append(errs, err)
			continue
		}
		delivered = append(delivered, m)
	}
	if len(errs) > 0 {
		return delivered, errors.Join(errs...)
	}
	return delivered, b.tidy(ctx)
}

// carries reports whether c may carry a message waiting, looked at
// without the lock: a courier that takes some recipients only (a node
// its agents', the controller people's: docs/ARCHITECTURE.md §8,
// "Nodes") does not wait for the lock while another host's types into a
// pane the messages it does not take. A message put meanwhile is
// carried at the next delivery.
func (b *Box) carries(ctx context.Context, c Courier) bool {
	if c.Takes == nil {
		return true
	}
	queue, err := b.pending(ctx)
	return err != nil || slices.ContainsFunc(queue, func(m Message) bool { return c.Takes(m.To) && m.State != Untaken })
}

// deliver delivers one message and returns it as delivered. What was
// done is recorded even when ctx ends meanwhile: a message typed and not
// recorded so would be typed again.
func (b *Box) deliver(ctx context.Context, m Message, c Courier) (Message, error) {
	switch {
	case m.State == Typed:
		return b.handOver(ctx, m, c)
	case m.State == Delivering && c.Seen != nil:
		into, ok, err := c.Seen(ctx, m)
		if err != nil {
			return m, fmt.Errorf("message %s to the %s may have been delivered before, and checking failed; it waits in %s for the next try: %w", m.ID, m.To, b.place, err)
		}
		if ok {
			// Typed where it was seen: recorded so, its hand-over cut
			// short again goes there only (Submit), never to a pane
			// that replaced it.
			m.State, m.TypedInto = Typed, into
			if err := b.write(context.WithoutCancel(ctx), Queued, m); err != nil {
				return m, err
			}
			return b.handOver(ctx, m, c)
		}
	}
	rec := context.WithoutCancel(ctx)
	m.State, m.TypedInto = Delivering, ""
	m.Attempts++
	if err := b.write(ctx, Queued, m); err != nil {
		return m, err
	}
	typed := func(into string) error {
		m.State, m.TypedInto = Typed, into
		return b.write(rec, Queued, m)
	}
	if err := c.Send(ctx, m, typed); err != nil {
		return m, b.sendFailed(rec, m, err)
	}
	return b.markSent(rec, m)
}

// maxHandOvers bounds the tries to hand over a message typed before.
const maxHandOvers = 3

// ErrGone is what a Courier's error wraps when the place a message was
// typed into is gone (the session was closed): what was typed there is
// lost, and the message is typed again when its recipient is back.
var ErrGone = errors.New("the recipient's pane is gone")

// handOver finishes the delivery of m, typed before. A hand-over that
// keeps failing is given up after maxHandOvers: the message stays in the
// outbox as Untaken, with why (LastError), rather than Enter pressed in
// the pane for ever (a stray Enter can answer a prompt).
func (b *Box) handOver(ctx context.Context, m Message, c Courier) (Message, error) {
	rec := context.WithoutCancel(ctx)
	if c.Submit == nil {
		return b.markSent(rec, m)
	}
	m.State = Typed
	err := c.Submit(ctx, m)
	switch {
	case err == nil:
		return b.markSent(rec, m)
	case errors.Is(err, ErrGone):
		m.State, m.TypedInto = Pending, ""
		return m, b.sendFailed(rec, m, err)
	}
	m.HandOvers++
	if m.HandOvers >= maxHandOvers {
		m.State = Untaken
		m.LastError = fmt.Sprintf("typed, then handed over %d times, and never taken: %v", m.HandOvers, err)
		return m, b.write(rec, Queued, m)
	}
	return m, b.sendFailed(rec, m, err)
}

// sendFailed records a failed send of m and returns the error to report.
// A message typed stays Typed; one that may have arrived stays
// Delivering; any other goes back to Pending.
func (b *Box) sendFailed(ctx context.Context, m Message, sendErr error) error {
	m.LastError = sendErr.Error()
	if m.State != Typed && !errors.Is(sendErr, ErrMaybeDelivered) {
		m.State = Pending
	}
	err := fmt.Errorf("message %s to the %s not delivered (attempt %d); it waits in %s for the next try: %w", m.ID, m.To, m.Attempts, b.place, sendErr)
	if werr := b.write(ctx, Queued, m); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// markSent moves m to the delivered: written there first, then removed
// from the queue, so a crash in between leaves it delivered, never
// undelivered; in one step where the place can (Mover).
func (b *Box) markSent(ctx context.Context, m Message) (Message, error) {
	m.State = Sent
	m.SentAt = timestamp()
	if mv, ok := b.place.(Mover); ok {
		data, err := encode(m)
		if err == nil {
			err = mv.Move(ctx, m.ID, data)
		}
		if err != nil {
			return m, fmt.Errorf("mark message %s sent: %w", m.ID, err)
		}
		return m, nil
	}
	if err := b.write(ctx, Delivered, m); err != nil {
		return m, err
	}
	return m, b.place.Remove(ctx, Queued, m.ID)
}

// tidy removes the oldest delivered messages beyond KeepSent, and the
// queued copies of delivered ones that a delivery stopped between
// writing a message to sent/ and removing it from the queue left behind.
func (b *Box) tidy(ctx context.Context) error {
	keep := b.KeepSent
	if keep <= 0 {
		keep = DefaultKeepSent
	}
	sent, err := b.place.IDs(ctx, Delivered)
	if err != nil {
		return err
	}
	queued, err := b.place.IDs(ctx, Queued)
	if err != nil {
		return err
	}
	for _, id := range sent[:max(0, len(sent)-keep)] {
		if err := b.place.Remove(ctx, Delivered, id); err != nil {
			return err
		}
	}
	for _, id := range queued {
		if _, found := slices.BinarySearch(sent, id); found {
			if err := b.place.Remove(ctx, Queued, id); err != nil {
				return err
			}
		}
	}
	return nil
}

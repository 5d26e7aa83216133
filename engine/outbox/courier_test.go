package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/outbox"
)

// typedNotSubmitted is a box whose one message ("CI failed") was typed into
// its pane and not submitted: the delivery was stopped between the two.
func typedNotSubmitted(t *testing.T, newBox newBoxFunc) (*outbox.Box, *pane) {
	t.Helper()
	b := newBox(t)
	put(t, b, "CI failed")
	p := &pane{crashAfterTyping: true}
	_, err := b.Carry(context.Background(), p.courier())
	require.Error(t, err)
	return b, p
}

// pane is a two-step recipient: what was typed, and what was submitted.
type pane struct {
	typed, submitted []string
	// crashAfterTyping stops the send between typing and Enter, as a
	// controller killed there does.
	crashAfterTyping bool
	fail             error
}

func (p *pane) courier() outbox.Courier {
	return outbox.Courier{
		Send: func(_ context.Context, m outbox.Message, typed func(into string) error) error {
			if p.fail != nil {
				return p.fail
			}
			p.typed = append(p.typed, m.Text)
			if err := typed("pane %1"); err != nil {
				return err
			}
			if p.crashAfterTyping {
				return errors.New("killed")
			}
			p.submitted = append(p.submitted, m.Text)
			return nil
		},
		Seen: func(_ context.Context, m outbox.Message) (string, bool, error) {
			for _, t := range p.typed {
				if t == m.Text {
					return "pane %1", true, nil
				}
			}
			return "", false, nil
		},
		Submit: func(_ context.Context, m outbox.Message) error {
			p.submitted = append(p.submitted, m.Text)
			return nil
		},
	}
}

func testADeliveryCutShortAfterTypingIsFinishedNotRepeated(t *testing.T, newBox newBoxFunc) {
	b, p := typedNotSubmitted(t, newBox)
	pending, err := b.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, outbox.Typed, pending[0].State)
	assert.Equal(t, "pane %1", pending[0].TypedInto, "recorded where it was typed, for the hand-over")

	p.crashAfterTyping = false
	delivered, err := b.Carry(context.Background(), p.courier())
	require.NoError(t, err)
	assert.Equal(t, []string{"CI failed"}, texts(delivered))
	assert.Equal(t, []string{"CI failed"}, p.typed, "typed once")
	assert.Equal(t, []string{"CI failed"}, p.submitted, "and handed over")
}

func testADeliveryCutShortBeforeItWasRecordedTypedIsFinishedWhenSeen(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	put(t, b, "rebased")
	p := &pane{fail: outbox.ErrMaybeDelivered}
	_, err := b.Carry(context.Background(), p.courier())
	require.ErrorIs(t, err, outbox.ErrMaybeDelivered)
	pending, err := b.Pending()
	require.NoError(t, err)
	assert.Equal(t, outbox.Delivering, pending[0].State)

	// It reached the pane after all (typed, as Seen finds): handed over.
	p.fail, p.typed = nil, []string{"rebased"}
	_, err = b.Carry(context.Background(), p.courier())
	require.NoError(t, err)
	assert.Equal(t, []string{"rebased"}, p.typed)
	assert.Equal(t, []string{"rebased"}, p.submitted)
}

func testOrderIsPerRecipient(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	ctx := context.Background()
	for _, m := range []outbox.Message{
		{To: outbox.ToAgent, Text: "step back"},
		{To: outbox.ToManager, Text: "escalated"},
		{To: outbox.ToAgent, Text: "second step back"},
	} {
		_, err := b.Put(ctx, m)
		require.NoError(t, err)
	}
	agentGone := errors.New("no tmux session")
	var got []string
	c := outbox.Courier{Send: func(_ context.Context, m outbox.Message, _ func(string) error) error {
		if m.To == outbox.ToAgent {
			return agentGone
		}
		got = append(got, m.Text)
		return nil
	}}
	delivered, err := b.Carry(ctx, c)
	require.ErrorIs(t, err, agentGone)
	assert.Equal(t, []string{"escalated"}, texts(delivered), "people are told although the agent is gone")
	pending, err := b.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 2)
	assert.Equal(t, 1, pending[0].Attempts)
	assert.Zero(t, pending[1].Attempts, "the agent's later message waits behind its first")
}

// What was typed into a pane that is gone since is lost: the message is
// typed again when its recipient is back, and the failed hand-over there
// is no hand-over spent.
func testATypedMessageWhosePaneIsGoneIsTypedAgain(t *testing.T, newBox newBoxFunc) {
	b, p := typedNotSubmitted(t, newBox)

	gone := p.courier()
	gone.Submit = func(context.Context, outbox.Message) error {
		return fmt.Errorf("%w: no tmux session", outbox.ErrGone)
	}
	_, err := b.Carry(context.Background(), gone)
	require.ErrorIs(t, err, outbox.ErrGone)
	pending, err := b.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1, "not counted delivered")
	assert.Equal(t, outbox.Pending, pending[0].State, "typed again next time")
	assert.Empty(t, pending[0].TypedInto, "typed nowhere now")
	assert.Zero(t, pending[0].HandOvers)

	p.crashAfterTyping = false
	delivered, err := b.Carry(context.Background(), p.courier())
	require.NoError(t, err)
	require.Len(t, delivered, 1)
	assert.Equal(t, []string{"CI failed", "CI failed"}, p.typed, "typed again into the pane that came back")
	assert.Equal(t, []string{"CI failed"}, p.submitted)
}

// A message typed into a pane whose program never shows it took it (it
// ignores input) is given up after a few hand-overs: it stays in the
// outbox, visibly, is pressed no more, and holds up no later message.
func testAMessageNeverTakenStaysInTheOutbox(t *testing.T, newBox newBoxFunc) {
	b, p := typedNotSubmitted(t, newBox)

	ignoring := p.courier()
	presses := 0
	ignoring.Submit = func(context.Context, outbox.Message) error {
		presses++
		return errors.New("the pane did not change after Enter")
	}
	var last []outbox.Message
	for range 5 {
		last, _ = b.Carry(context.Background(), ignoring)
	}
	assert.Equal(t, 3, presses, "Enter is pressed a bounded number of times")
	pending, err := b.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1, "it stays in the outbox, where people see it")
	assert.Equal(t, outbox.Untaken, pending[0].State)
	assert.Contains(t, pending[0].LastError, "never taken")
	assert.Empty(t, last, "nothing delivered after it was given up")

	put(t, b, "later")
	p.crashAfterTyping = false
	delivered, err := b.Carry(context.Background(), p.courier())
	require.NoError(t, err)
	require.Len(t, delivered, 1, "a later message is not held up")
	assert.Equal(t, "later", delivered[0].Text)
}

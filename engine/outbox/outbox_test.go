package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/outbox"
)

// recorder is a recipient: it records what was sent, in order, and can be
// told to fail.
type recorder struct {
	got  []string
	fail error
}

func (r *recorder) send(_ context.Context, m outbox.Message) error {
	if r.fail != nil {
		return r.fail
	}
	r.got = append(r.got, m.Text)
	return nil
}

func newDirBox(t *testing.T) *outbox.Box {
	t.Helper()
	return outbox.Open(filepath.Join(t.TempDir(), "issues", "007", "outbox"))
}

func put(t *testing.T, b *outbox.Box, texts ...string) []outbox.Message {
	t.Helper()
	var out []outbox.Message
	for _, text := range texts {
		m, err := b.Put(context.Background(), outbox.Message{Kind: "message", Text: text})
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

func texts(ms []outbox.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Text
	}
	return out
}

func testNothingIsCreatedUntilPut(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	pending, err := b.Pending()
	require.NoError(t, err)
	assert.Empty(t, pending)
	delivered, err := b.Deliver(context.Background(), (&recorder{}).send, nil)
	require.NoError(t, err)
	assert.Empty(t, delivered)
	nothingIn(t, b)
}

func testPutKeepsOrderAndFillsIn(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	before := time.Now()
	put(t, b, "one", "two", "three")

	pending, err := b.Pending()
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two", "three"}, texts(pending))
	for i, m := range pending {
		assert.Equal(t, outbox.Pending, m.State)
		assert.Equal(t, outbox.ToAgent, m.To, "an empty recipient is the agent")
		assert.False(t, m.Created.Before(before))
		if i > 0 {
			assert.Less(t, pending[i-1].ID, m.ID, "IDs sort in the order of Put")
			assert.NotEqual(t, outbox.Marker(pending[i-1]), outbox.Marker(m))
		}
	}
	assert.Regexp(t, `^\[agenttree [0-9a-f]{8}\]$`, outbox.Marker(pending[0]))

	ids, err := b.Place().IDs(context.Background(), outbox.Queued)
	require.NoError(t, err)
	require.Len(t, ids, 3)
	for i, m := range pending {
		assert.Equal(t, m.ID, ids[i])
	}
	if b.Dir() == "" {
		return
	}
	// One file per message, named so that a listing is oldest first.
	entries, err := os.ReadDir(b.Dir())
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		if e.Name()[0] != '.' {
			files = append(files, e.Name())
		}
	}
	require.Len(t, files, 3)
	for i, m := range pending {
		assert.Equal(t, m.ID+".json", files[i])
	}
}

func testPutRefusesWhatCannotBeDelivered(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	for _, tc := range []struct {
		name string
		m    outbox.Message
		want string
	}{
		{"no text", outbox.Message{Text: " \n"}, "no text"},
		{"unknown recipient", outbox.Message{To: "reviewer", Text: "hi"}, `"reviewer"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.Put(context.Background(), tc.m)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	nothingIn(t, b)
}

func testPutWithAKeyAddsItOnce(t *testing.T, newBox newBoxFunc) {
	ctx := context.Background()
	b := newBox(t)
	first, err := b.Put(ctx, outbox.Message{Key: "ci-failed/abc123", Text: "CI failed"})
	require.NoError(t, err)
	again, err := b.Put(ctx, outbox.Message{Key: "ci-failed/abc123", Text: "CI failed, said again"})
	require.NoError(t, err)
	assert.Equal(t, first, again)
	other, err := b.Put(ctx, outbox.Message{Key: "ci-failed/def456", Text: "CI failed on the new head"})
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, other.ID)

	r := &recorder{}
	_, err = b.Deliver(ctx, r.send, nil)
	require.NoError(t, err)
	afterSent, err := b.Put(ctx, outbox.Message{Key: "ci-failed/abc123", Text: "CI failed"})
	require.NoError(t, err)
	assert.Equal(t, first.ID, afterSent.ID, "a delivered message's key still counts")
	assert.Equal(t, outbox.Sent, afterSent.State)
	_, err = b.Deliver(ctx, r.send, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"CI failed", "CI failed on the new head"}, r.got)
}

func testDeliverInOrderAndKeepHistory(t *testing.T, newBox newBoxFunc) {
	ctx := context.Background()
	b := newBox(t)
	put(t, b, "one", "two")
	r := &recorder{}
	delivered, err := b.Deliver(ctx, r.send, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two"}, r.got)
	assert.Equal(t, []string{"one", "two"}, texts(delivered))

	pending, err := b.Pending()
	require.NoError(t, err)
	assert.Empty(t, pending)

	put(t, b, "three")
	recent, err := b.Recent(10)
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two", "three"}, texts(recent))
	for _, m := range recent[:2] {
		assert.Equal(t, outbox.Sent, m.State)
		assert.Equal(t, 1, m.Attempts)
		assert.False(t, m.SentAt.IsZero())
	}
	assert.Equal(t, outbox.Pending, recent[2].State)
	last, err := b.Recent(1)
	require.NoError(t, err)
	assert.Equal(t, []string{"three"}, texts(last))
}

func testAFailedSendKeepsTheMessageAndTheOrder(t *testing.T, newBox newBoxFunc) {
	ctx := context.Background()
	b := newBox(t)
	put(t, b, "one", "two", "three")

	away := errors.New("no tmux session agenttree-agent-007")
	calls := 0
	flaky := func(ctx context.Context, m outbox.Message) error {
		if calls++; calls == 2 {
			return away
		}
		return nil
	}
	delivered, err := b.Deliver(ctx, flaky, nil)
	require.ErrorIs(t, err, away)
	assert.Contains(t, err.Error(), "waits in "+b.Place().String())
	assert.Equal(t, []string{"one"}, texts(delivered))

	pending, err := b.Pending()
	require.NoError(t, err)
	require.Equal(t, []string{"two", "three"}, texts(pending), "later messages wait behind the failed one")
	assert.Equal(t, outbox.Pending, pending[0].State)
	assert.Equal(t, 1, pending[0].Attempts)
	assert.Equal(t, away.Error(), pending[0].LastError)
	assert.Zero(t, pending[1].Attempts)

	r := &recorder{}
	delivered, err = b.Deliver(ctx, r.send, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"two", "three"}, r.got)
	assert.Equal(t, 2, delivered[0].Attempts)
	assert.Equal(t, away.Error(), delivered[0].LastError, "the history says it took two tries")
}

func testAnUnknownOutcomeIsCheckedBeforeSendingAgain(t *testing.T, newBox newBoxFunc) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		arrived  bool
		seenErr  error
		wantSent []string
		want     outbox.State
	}{
		{"it arrived: marked sent, not sent again", true, nil, nil, outbox.Sent},
		{"it did not arrive: sent", false, nil, []string{"CI failed"}, outbox.Sent},
		{"cannot tell: it waits", false, errors.New("no tmux server"), nil, outbox.Delivering},
	} {
		for _, cause := range []string{"crash", "unconfirmed send"} {
			t.Run(cause+"/"+tc.name, func(t *testing.T) {
				b := newBox(t)
				m := put(t, b, "CI failed")[0]
				if cause == "crash" {
					// agenttree stopped between marking it and sending it.
					m.State, m.Attempts = outbox.Delivering, 1
					writeQueued(t, b, m)
				} else {
					unconfirmed := func(context.Context, outbox.Message) error {
						return errors.Join(outbox.ErrMaybeDelivered, errors.New("the pane did not change"))
					}
					_, err := b.Deliver(ctx, unconfirmed, nil)
					require.ErrorIs(t, err, outbox.ErrMaybeDelivered)
				}

				var asked []string
				seen := func(_ context.Context, m outbox.Message) (string, bool, error) {
					asked = append(asked, outbox.Marker(m))
					return "", tc.arrived, tc.seenErr
				}
				r := &recorder{}
				_, err := b.Deliver(ctx, r.send, seen)
				if tc.seenErr != nil {
					require.ErrorIs(t, err, tc.seenErr)
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, []string{outbox.Marker(m)}, asked)
				assert.Equal(t, tc.wantSent, r.got)
				recent, err := b.Recent(0)
				require.NoError(t, err)
				require.Len(t, recent, 1)
				assert.Equal(t, tc.want, recent[0].State)
			})
		}
	}
}

func testACrashAfterWritingSentLeavesItDelivered(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	put(t, b, "one")
	r := &recorder{}
	_, err := b.Deliver(context.Background(), r.send, nil)
	require.NoError(t, err)
	// Put the queued copy back, as a crash between writing sent/ and
	// removing it from the queue leaves it.
	sent, err := b.Recent(1)
	require.NoError(t, err)
	stale := sent[0]
	stale.State = outbox.Delivering
	writeQueued(t, b, stale)

	pending, err := b.Pending()
	require.NoError(t, err)
	assert.Empty(t, pending)
	recent, err := b.Recent(0)
	require.NoError(t, err)
	assert.Len(t, recent, 1)
	assert.Equal(t, outbox.Sent, recent[0].State)

	_, err = b.Deliver(context.Background(), r.send, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"one"}, r.got, "not sent twice")
	_, err = b.Place().Read(context.Background(), outbox.Queued, stale.ID)
	require.ErrorIs(t, err, fs.ErrNotExist, "the stale copy is removed")
}

func testOnlyTheLastSentMessagesAreKept(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	b.KeepSent = 3
	put(t, b, "1", "2", "3", "4", "5")
	_, err := b.Deliver(context.Background(), (&recorder{}).send, nil)
	require.NoError(t, err)
	put(t, b, "6")

	recent, err := b.Recent(0)
	require.NoError(t, err)
	assert.Equal(t, []string{"3", "4", "5", "6"}, texts(recent), "the pending one and the last three sent")
}

func testDeliverStopsWithTheContext(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	put(t, b, "one", "two")
	ctx, cancel := context.WithCancel(context.Background())
	delivered, err := b.Deliver(ctx, func(context.Context, outbox.Message) error {
		cancel()
		return nil
	}, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []string{"one"}, texts(delivered))
	pending, err := b.Pending()
	require.NoError(t, err)
	assert.Equal(t, []string{"two"}, texts(pending))
}

func testABrokenFileSaysWhichAndWhatToDo(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	m := put(t, b, "one")[0]
	require.NoError(t, b.Place().Write(context.Background(), outbox.Queued, m.ID, []byte("{")))
	_, err := b.Pending()
	require.Error(t, err)
	assert.Contains(t, err.Error(), b.Place().Where(outbox.Queued, m.ID))
	if b.Dir() != "" {
		assert.Contains(t, err.Error(), filepath.Join(b.Dir(), m.ID+".json"))
	}
	assert.Contains(t, err.Error(), "remove it")
}

// writeQueued writes m as the queued copy of its ID, as a crash leaves it.
func writeQueued(t *testing.T, b *outbox.Box, m outbox.Message) {
	t.Helper()
	data, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, b.Place().Write(context.Background(), outbox.Queued, m.ID, data))
}

// nothingIn checks that nothing was made for b: no message, no directory.
func nothingIn(t *testing.T, b *outbox.Box) {
	t.Helper()
	for _, f := range []outbox.Folder{outbox.Queued, outbox.Delivered} {
		ids, err := b.Place().IDs(context.Background(), f)
		require.NoError(t, err)
		assert.Empty(t, ids)
	}
	if b.Dir() != "" {
		assert.NoDirExists(t, b.Dir())
	}
}

package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/engine/issues/etcdstore"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// newBoxFunc makes an empty box, in a place of its own.
type newBoxFunc func(t *testing.T) *outbox.Box

// behaviours are the box's rules, which hold whatever place keeps it.
func behaviours() map[string]func(*testing.T, newBoxFunc) {
	return map[string]func(*testing.T, newBoxFunc){
		"NothingIsCreatedUntilPut":                            testNothingIsCreatedUntilPut,
		"PutKeepsOrderAndFillsIn":                             testPutKeepsOrderAndFillsIn,
		"PutRefusesWhatCannotBeDelivered":                     testPutRefusesWhatCannotBeDelivered,
		"PutWithAKeyAddsItOnce":                               testPutWithAKeyAddsItOnce,
		"DeliverInOrderAndKeepHistory":                        testDeliverInOrderAndKeepHistory,
		"AFailedSendKeepsTheMessageAndTheOrder":               testAFailedSendKeepsTheMessageAndTheOrder,
		"AnUnknownOutcomeIsCheckedBeforeSendingAgain":         testAnUnknownOutcomeIsCheckedBeforeSendingAgain,
		"ACrashAfterWritingSentLeavesItDelivered":             testACrashAfterWritingSentLeavesItDelivered,
		"OnlyTheLastSentMessagesAreKept":                      testOnlyTheLastSentMessagesAreKept,
		"DeliverStopsWithTheContext":                          testDeliverStopsWithTheContext,
		"ABrokenFileSaysWhichAndWhatToDo":                     testABrokenFileSaysWhichAndWhatToDo,
		"ADeliveryCutShortAfterTypingIsFinishedNotRepeated":   testADeliveryCutShortAfterTypingIsFinishedNotRepeated,
		"ADeliveryCutShortBeforeItWasRecordedTypedIsFinished": testADeliveryCutShortBeforeItWasRecordedTypedIsFinishedWhenSeen,
		"OrderIsPerRecipient":                                 testOrderIsPerRecipient,
		"ATypedMessageWhosePaneIsGoneIsTypedAgain":            testATypedMessageWhosePaneIsGoneIsTypedAgain,
		"AMessageNeverTakenStaysInTheOutbox":                  testAMessageNeverTakenStaysInTheOutbox,
		"ACourierTakingNoneWaitingWaitsForNoLock":             testACourierTakingNoneWaitingWaitsForNoLock,
	}
}

// etcdBoxes makes boxes in etcd, each under a prefix of its own on one
// embedded member; boxes of one prefix made on other clients are another
// host's view of the same box.
type etcdBoxes struct {
	cluster *etcdtest.Cluster
	cli     *clientv3.Client
	n       atomic.Int64
}

func startEtcdBoxes(t *testing.T) *etcdBoxes {
	c := etcdtest.Start(t)
	return &etcdBoxes{cluster: c, cli: c.Client(t)}
}

// prefix is a store prefix never used before.
func (e *etcdBoxes) prefix() string { return fmt.Sprintf("/agenttree/box-%d", e.n.Add(1)) }

// at is issue 7's box under prefix, through a store on cli (a client of
// its own when nil).
func (e *etcdBoxes) at(t *testing.T, cli *clientv3.Client, prefix string) *outbox.Box {
	t.Helper()
	if cli == nil {
		cli = e.cluster.Client(t)
	}
	s := etcdstore.New(cli, prefix)
	t.Cleanup(func() { s.Close() })
	return outbox.At(s.Outbox(7))
}

func TestTheBoxKeepsItsRulesInEachPlace(t *testing.T) {
	etcd := startEtcdBoxes(t)
	places := map[string]newBoxFunc{
		"dir":  newDirBox,
		"etcd": func(t *testing.T) *outbox.Box { return etcd.at(t, etcd.cli, etcd.prefix()) },
	}
	for name, test := range behaviours() {
		for place, newBox := range places {
			t.Run(place+"/"+name, func(t *testing.T) {
				t.Parallel()
				test(t, newBox)
			})
		}
	}
}

// Over etcd, hosts share a box: several stores on clients of their own
// (each a host) put one key at once, and one message is added, which
// every one of them is given; then they deliver the box at once, and
// each message is delivered once, in order.
func TestHostsSharingABoxInEtcdPutAKeyOnceAndDeliverEachMessageOnce(t *testing.T) {
	etcd := startEtcdBoxes(t)
	prefix := etcd.prefix()
	hosts := make([]*outbox.Box, 4)
	for i := range hosts {
		hosts[i] = etcd.at(t, nil, prefix)
	}
	ctx := context.Background()
	ids := make([]string, len(hosts))
	var wg sync.WaitGroup
	for i, b := range hosts {
		wg.Go(func() {
			m, err := b.Put(ctx, outbox.Message{Key: "review/42", Text: fmt.Sprint("from host ", i)})
			assert.NoError(t, err)
			ids[i] = m.ID
		})
	}
	wg.Wait()
	pending, err := hosts[0].Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1, "one message for the key")
	for _, id := range ids {
		assert.Equal(t, pending[0].ID, id, "every host got the one message")
	}

	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("message %02d", i))
	}
	put(t, hosts[1], want...)
	var mu sync.Mutex
	var got []string
	send := func(_ context.Context, m outbox.Message) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m.Text)
		return nil
	}
	for _, b := range hosts {
		wg.Go(func() {
			if _, err := b.Deliver(ctx, send, nil); err != nil {
				assert.ErrorIs(t, err, atomicfile.ErrLocked, "a host may give up waiting; none delivers twice")
			}
		})
	}
	wg.Wait()
	assert.Equal(t, append([]string{pending[0].Text}, want...), got, "each message once, in order")
	pending, err = hosts[2].Pending()
	require.NoError(t, err)
	assert.Empty(t, pending)
}

// A box whose deliver lock another host holds is waited for within the
// caller's context, and the error says the box is busy.
func TestABoxInEtcdBusyElsewhereIsWaitedForWithinTheContext(t *testing.T) {
	etcd := startEtcdBoxes(t)
	prefix := etcd.prefix()
	here, there := etcd.at(t, nil, prefix), etcd.at(t, nil, prefix)
	put(t, here, "one")
	ctx := context.Background()
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := there.Deliver(ctx, func(context.Context, outbox.Message) error {
			close(held)
			<-release
			return nil
		}, nil)
		done <- err
	}()
	<-held
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := here.Deliver(short, (&recorder{}).send, nil)
	require.ErrorIs(t, err, atomicfile.ErrLocked)
	assert.Contains(t, err.Error(), "the outbox etcd "+prefix)
	close(release)
	require.NoError(t, <-done)
}

// A courier that takes some recipients only (a node its agents', the
// controller people's) does not wait for the lock of another delivering
// messages it does not take: the controller's tick is not held while a
// node types into a pane.
func testACourierTakingNoneWaitingWaitsForNoLock(t *testing.T, newBox newBoxFunc) {
	b := newBox(t)
	ctx := context.Background()
	_, err := b.Put(ctx, outbox.Message{To: outbox.ToAgent, Text: "for the agent"})
	require.NoError(t, err)
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := b.Deliver(ctx, func(context.Context, outbox.Message) error {
			close(held)
			<-release
			return nil
		}, nil)
		done <- err
	}()
	<-held
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	people := outbox.Courier{
		Send:  func(context.Context, outbox.Message, func(string) error) error { return errors.New("not for people") },
		Takes: func(r outbox.Recipient) bool { return r != outbox.ToAgent },
	}
	delivered, err := b.Carry(short, people)
	require.NoError(t, err, "not waited for the lock")
	assert.Empty(t, delivered)
	close(release)
	require.NoError(t, <-done)
}

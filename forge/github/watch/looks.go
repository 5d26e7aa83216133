package watch

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/webhook"
)

// hookLook is the look at a hook's deliveries either mode makes every
// CheckEvery: webhook mode at the hook it keeps, gh-forward mode at its
// running forwarder's. GitHub delivers a failed delivery no more, and a
// forwarder can be up and relay nothing: what the look finds failed or
// lost is told of, and the watch is unhealthy until a delivery arrives.
type hookLook struct {
	hook int64
	// seen is when the last look began; zero when there is nothing to
	// look back on (a hook just made).
	seen time.Time
	// failing is what the log says when deliveries fail, or are lost,
	// while the receiver is up; args go with it.
	failing string
	args    []any
}

// look reads the hook's deliveries since the last look and keeps when it
// began: a delivery that fails while it reads is found by the next.
func (w *Watching) look(ctx context.Context, l *hookLook, changed func(forge.Change)) error {
	at := time.Now()
	if l.seen.IsZero() {
		w.mu.Lock()
		w.gap = false
		w.mu.Unlock()
		l.seen = at
		return nil
	}
	res, err := w.fillGap(ctx, l.hook, l.seen, changed)
	if err != nil {
		return err
	}
	if d := res.failing; d != nil {
		w.log.Warn(l.failing, append(slices.Clone(l.args), "status_code", d.StatusCode, "status", d.Status, "delivery", d.GUID, "at", d.DeliveredAt)...)
		w.mu.Lock()
		w.since = time.Time{}
		w.mu.Unlock()
	}
	// No later look reaches back past this one's start: what the receiver
	// heard well before it need not be kept.
	w.forgetHeard(l.seen.Add(-time.Minute))
	l.seen = at
	return nil
}

// lookEvery calls look now and then every CheckEvery, until ctx is done
// (nil) or look fails (its error).
func (w *Watching) lookEvery(ctx context.Context, look func() error) error {
	failed := func(err error) error {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if err := look(); err != nil {
		return failed(err)
	}
	tick := time.NewTicker(w.ev.CheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := look(); err != nil {
			return failed(err)
		}
	}
}

// maxHeard bounds the deliveries naming the looked-at hook the receiver
// remembers between looks; past it, it forgets them all, and what GitHub
// made before then is no more taken for lost.
const maxHeard = 4096

// heardDelivery is when the receiver took a delivery, and the hook it
// named.
type heardDelivery struct {
	at   time.Time
	hook string
}

// heard notes a delivery the receiver took, by its X-GitHub-Delivery,
// for lost. Once the hook the looks read is known, only deliveries naming
// it are kept, and so bounded: gh-forward mode's secret is on the
// forwarder's command line, and a local process signing a flood of
// deliveries naming other hooks must not make the receiver forget what
// came through its hook, which would hide what was lost
// (docs/SECURITY.md). Before, as its ping may arrive before GitHub lists
// the hook, all are kept until it is (hookKnown). Called with w.mu held.
func (w *Watching) heard(guid, hookID string) {
	if guid == "" {
		return
	}
	looked := w.fwdHook
	if w.ev.Mode == ModeWebhook {
		looked = w.webHook
	}
	if looked != 0 && hookID != strconv.FormatInt(looked, 10) {
		return
	}
	now := time.Now()
	if len(w.heardAt) >= maxHeard {
		clear(w.heardAt)
		w.heardFrom = now
	}
	w.heardAt[guid] = heardDelivery{at: now, hook: hookID}
}

// hookKnown forgets the deliveries heard naming another hook than the
// one the looks read, now known. Called with w.mu held.
func (w *Watching) hookKnown(hook int64) {
	id := strconv.FormatInt(hook, 10)
	maps.DeleteFunc(w.heardAt, func(_ string, d heardDelivery) bool { return d.hook != id })
}

// forgetHeard forgets the deliveries heard before before.
func (w *Watching) forgetHeard(before time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for guid, d := range w.heardAt {
		if d.at.Before(before) {
			delete(w.heardAt, guid)
		}
	}
	if w.heardFrom.Before(before) {
		w.heardFrom = before
	}
}

// lost says that d, which GitHub delivered and had answered 2xx, never
// reached the receiver: a forwarder that answers and relays nothing, or
// events.url answered by something else. Only of a delivery made since
// the receiver began (up) and since what it remembers can it tell.
func (w *Watching) lost(d *ghapi.Delivery, up time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !d.DeliveredAt.After(up) || !d.DeliveredAt.After(w.heardFrom) {
		return false
	}
	_, ok := w.heardAt[d.GUID]
	return !ok
}

// gapFilled is what fillGap found.
type gapFilled struct {
	// recovered is how many failed deliveries were read.
	recovered int
	// failing is the newest delivery since after that failed, or was
	// lost, while the receiver was up; nil when none was.
	failing *ghapi.Delivery
}

// fillGap reads the deliveries of hook made after after that failed or
// never reached the receiver (lost), and tells of the changes they name:
// GitHub does not deliver them again on its own. The gap stays open when the deliveries listed do not reach
// back to after: what the others told of is left to the poll.
func (w *Watching) fillGap(ctx context.Context, hookID int64, after time.Time, changed func(forge.Change)) (gapFilled, error) {
	var res gapFilled
	ds, err := w.api.Deliveries(ctx, hookID)
	if err != nil {
		return res, err
	}
	// GitHub's times are to the second: a delivery in after's second may
	// be after it. Reading one twice costs one look.
	after = after.Truncate(time.Second)
	w.mu.Lock()
	up := w.started.Truncate(time.Second)
	w.mu.Unlock()
	for i := range ds {
		d := &ds[i]
		if d.DeliveredAt.Before(after) || (d.OK() && !w.lost(d, up)) {
			continue
		}
		// In the receiver's first second it may not have listened yet.
		if res.failing == nil && d.DeliveredAt.After(up) {
			res.failing = d
		}
		if !slices.Contains(webhook.Events, d.Event) {
			continue
		}
		full, err := w.api.DeliveryPayload(ctx, hookID, d.ID)
		if err != nil {
			return res, err
		}
		cs, err := webhook.Parse(d.Event, full.Request.Payload, "")
		if err != nil {
			w.log.Warn("a failed delivery could not be read; the poll will find what it told of", "delivery", d.GUID, "err", err)
			continue
		}
		for _, c := range cs {
			changed(c)
		}
		res.recovered++
	}
	// Newest first: a full page whose oldest is not before after's second
	// may not be all of them.
	covered := len(ds) < ghapi.DeliveriesPage || ds[len(ds)-1].DeliveredAt.Before(after)
	w.recovered.Add(int64(res.recovered))
	w.mu.Lock()
	w.gap = !covered
	w.mu.Unlock()
	if !covered {
		w.log.Warn("more of GitHub's deliveries than one page since the last look; polling as without events until the next look",
			"hook", hookID, "since", after, "listed", len(ds), "recovered", res.recovered)
		return res, nil
	}
	w.gapsFilled.Add(1)
	w.log.Info("filled a gap in GitHub's deliveries", "hook", hookID, "since", after, "recovered", res.recovered)
	return res, nil
}

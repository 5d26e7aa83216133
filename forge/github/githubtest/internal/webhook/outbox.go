package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Outbox sends the server's deliveries in the order they were made, one
// at a time, outside the server's lock, as GitHub's hookshot does.
type Outbox struct {
	lock   sync.Locker // the server's: guards every Hooks
	now    func() time.Time
	nextID func() int64
	client *http.Client

	mu      sync.Mutex
	queue   []pending
	wake    chan struct{}
	stopped chan struct{}
}

type pending struct {
	h *hook
	d *delivery
}

// NewOutbox makes the outbox of a server whose state lock guards, with
// now and nextID the server's clock and ids, both called with lock held.
func NewOutbox(lock sync.Locker, now func() time.Time, nextID func() int64) *Outbox {
	return &Outbox{lock: lock, now: now, nextID: nextID, client: &http.Client{Timeout: 10 * time.Second},
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
}

func (o *Outbox) push(p pending) {
	o.mu.Lock()
	o.queue = append(o.queue, p)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Run sends deliveries until Stop.
func (o *Outbox) Run() {
	for {
		select {
		case <-o.stopped:
			return
		case <-o.wake:
		}
		for {
			o.mu.Lock()
			if len(o.queue) == 0 {
				o.mu.Unlock()
				break
			}
			p := o.queue[0]
			o.queue = o.queue[1:]
			o.mu.Unlock()
			o.send(p)
		}
	}
}

// Stop ends Run once the delivery it is sending, if any, is done.
func (o *Outbox) Stop() { close(o.stopped) }

// send posts one delivery and records how it went.
func (o *Outbox) send(p pending) {
	o.lock.Lock()
	url, secret, hookID := p.h.url, p.h.secret, p.h.id
	o.lock.Unlock()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(p.d.payload))
	code, status := 0, "failed to connect to host"
	start := time.Now()
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "GitHub-Hookshot/fake")
		req.Header.Set("X-GitHub-Event", p.d.event)
		req.Header.Set("X-GitHub-Delivery", p.d.guid)
		req.Header.Set("X-GitHub-Hook-ID", strconv.FormatInt(hookID, 10))
		if secret != "" {
			req.Header.Set("X-Hub-Signature-256", sign(secret, p.d.payload))
		}
		var resp *http.Response
		if resp, err = o.client.Do(req); err == nil {
			resp.Body.Close()
			code, status = resp.StatusCode, "OK"
			if code < 200 || code > 299 {
				status = fmt.Sprintf("Invalid HTTP Response: %d", code)
			}
		}
	}
	o.lock.Lock()
	p.d.statusCode, p.d.status, p.d.duration, p.d.deliveredAt = code, status, time.Since(start), o.now()
	o.lock.Unlock()
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

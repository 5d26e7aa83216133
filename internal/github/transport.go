package github

import (
	"bytes"
	"container/list"
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/forge"
)

// RetryPolicy bounds how the client waits out server errors and rate
// limits. Zero fields take the defaults.
type RetryPolicy struct {
	// MaxAttempts is the number of tries per request, the first included
	// (default 4).
	MaxAttempts int
	// BaseDelay is the first backoff after a 5xx answer; it doubles per
	// attempt (default 1s).
	BaseDelay time.Duration
	// MaxDelay caps one backoff (default 20s).
	MaxDelay time.Duration
	// MaxWait is the longest single wait the client sits through for a
	// rate limit (Retry-After or a reset time). A longer one is returned
	// at once as a *forge.RateLimitError, so the caller can reschedule
	// instead of blocking a worker for up to an hour (default 30s).
	MaxWait time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 20 * time.Second
	}
	if p.MaxWait <= 0 {
		p.MaxWait = 30 * time.Second
	}
	return p
}

// RateLimit is the last primary rate-limit state GitHub reported for one
// resource ("core", "graphql", ...).
type RateLimit struct {
	Resource  string
	Limit     int
	Remaining int
	Used      int
	Reset     time.Time
}

// Stats counts what the transport did since the client was made.
type Stats struct {
	// Requests is how many HTTP requests went to the network, retries
	// included.
	Requests int64
	// CacheHits is how many GETs were answered 304 and served from the
	// ETag cache.
	CacheHits int64
	// Retries is how many requests were sent again after a 5xx, a rate
	// limit or a network error.
	Retries int64
	// RateLimited is how many rate-limit answers (primary or secondary)
	// came back.
	RateLimited int64
}

type counters struct {
	requests, cacheHits, retries, rateLimited atomic.Int64
}

type ctxKey int

const retryableKey ctxKey = iota

// retryable marks a request as safe to send twice, so a 5xx answer (which
// may come after GitHub did the work) can be retried. GETs, PUTs and
// DELETEs are retryable anyway; POSTs that create things are not.
func retryable(ctx context.Context) context.Context {
	return context.WithValue(ctx, retryableKey, true)
}

func isRetryable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	v, _ := req.Context().Value(retryableKey).(bool)
	return v
}

// sleepFunc waits d or until ctx is done.
type sleepFunc func(ctx context.Context, d time.Duration) error

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryTransport retries server errors and waits out rate limits. It sits
// under the ETag cache, so a retried GET still carries If-None-Match.
type retryTransport struct {
	next   http.RoundTripper
	policy RetryPolicy
	sleep  sleepFunc
	now    func() time.Time
	stats  *counters
	log    *slog.Logger

	mu     sync.Mutex
	limits map[string]RateLimit
	// secondaryUntil holds back every request after a secondary limit:
	// GitHub counts them per user, not per endpoint.
	secondaryUntil time.Time
}

func resourceOf(req *http.Request) string {
	switch {
	case strings.HasSuffix(req.URL.Path, "/graphql"):
		return "graphql"
	case strings.Contains(req.URL.Path, "/search/"):
		return "search"
	}
	return "core"
}

type verdict int

const (
	done verdict = iota
	serverError
	rateLimited
)

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := t.waitForLimit(ctx, resourceOf(req)); err != nil {
		return nil, err
	}
	canRetry := isRetryable(req)
	rewindable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		t.stats.requests.Add(1)
		resp, err := t.next.RoundTrip(r)
		last := attempt >= t.policy.MaxAttempts || !rewindable
		if err != nil {
			if ctx.Err() != nil || !canRetry || last {
				return nil, err
			}
			if err := t.pause(ctx, req, attempt, t.backoff(attempt), err.Error()); err != nil {
				return nil, err
			}
			continue
		}
		t.record(req, resp)

		v, wait, rlErr := t.judge(resp, attempt)
		switch v {
		case done:
			return resp, nil
		case serverError:
			if !canRetry || last || wait > t.policy.MaxWait {
				return resp, nil
			}
		case rateLimited:
			t.stats.rateLimited.Add(1)
			if rlErr.Secondary {
				t.mu.Lock()
				t.secondaryUntil = t.now().Add(wait)
				t.mu.Unlock()
			}
			if last || wait > t.policy.MaxWait {
				drain(resp)
				return nil, rlErr
			}
		}
		drain(resp)
		if err := t.pause(ctx, req, attempt, wait, resp.Status); err != nil {
			return nil, err
		}
	}
}

func (t *retryTransport) pause(ctx context.Context, req *http.Request, attempt int, wait time.Duration, why string) error {
	t.stats.retries.Add(1)
	t.log.Debug("github: retrying", "method", req.Method, "url", req.URL.Redacted(), "attempt", attempt, "wait", wait, "after", why)
	return t.sleep(ctx, wait)
}

// waitForLimit holds a request back while a limit we already hit is in
// force: sending it would only earn another refusal and, per GitHub's
// docs, risk the integration being banned.
func (t *retryTransport) waitForLimit(ctx context.Context, resource string) error {
	t.mu.Lock()
	now := t.now()
	var rlErr *forge.RateLimitError
	if now.Before(t.secondaryUntil) {
		rlErr = &forge.RateLimitError{Reset: t.secondaryUntil, RetryAfter: t.secondaryUntil.Sub(now), Secondary: true}
	} else if l, ok := t.limits[resource]; ok && l.Remaining == 0 && now.Before(l.Reset) {
		rlErr = &forge.RateLimitError{Reset: l.Reset, RetryAfter: l.Reset.Sub(now) + time.Second}
	}
	t.mu.Unlock()
	if rlErr == nil {
		return nil
	}
	if rlErr.RetryAfter > t.policy.MaxWait {
		return rlErr
	}
	return t.sleep(ctx, rlErr.RetryAfter)
}

func (t *retryTransport) record(req *http.Request, resp *http.Response) {
	h := resp.Header
	remaining, err := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	if err != nil {
		return
	}
	l := RateLimit{Resource: h.Get("X-RateLimit-Resource"), Remaining: remaining}
	if l.Resource == "" {
		l.Resource = resourceOf(req)
	}
	l.Limit, _ = strconv.Atoi(h.Get("X-RateLimit-Limit"))
	l.Used, _ = strconv.Atoi(h.Get("X-RateLimit-Used"))
	if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		l.Reset = time.Unix(reset, 0)
	}
	t.mu.Lock()
	t.limits[l.Resource] = l
	t.mu.Unlock()
}

func (t *retryTransport) rateLimits() []RateLimit {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]RateLimit, 0, len(t.limits))
	for _, l := range t.limits {
		out = append(out, l)
	}
	return out
}

func (t *retryTransport) rateLimit(resource string) (RateLimit, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.limits[resource]
	return l, ok
}

// judge follows GitHub's guidance: a 403/429 with remaining 0 waits for
// the reset; a secondary limit waits Retry-After, else the reset, else at
// least a minute, growing with each attempt; 5xx backs off exponentially.
func (t *retryTransport) judge(resp *http.Response, attempt int) (verdict, time.Duration, *forge.RateLimitError) {
	code := resp.StatusCode
	retryAfter, hasRetryAfter := parseRetryAfter(resp.Header.Get("Retry-After"), t.now())
	switch {
	case code == http.StatusForbidden || code == http.StatusTooManyRequests:
		body := peekBody(resp, 64<<10)
		msg := strings.ToLower(string(body))
		secondary := strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "abuse")
		primary := resp.Header.Get("X-RateLimit-Remaining") == "0"
		if !primary && !secondary && !hasRetryAfter && code == http.StatusForbidden {
			// A plain 403 is a permission problem, not a limit.
			return done, 0, nil
		}
		rl := &forge.RateLimitError{Secondary: !primary || secondary}
		switch {
		case hasRetryAfter:
			rl.RetryAfter = retryAfter
		case primary:
			if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				rl.RetryAfter = max(time.Unix(reset, 0).Sub(t.now()), 0) + time.Second
			} else {
				rl.RetryAfter = time.Minute
			}
		default:
			rl.RetryAfter = time.Minute << min(attempt-1, 5)
		}
		rl.Reset = t.now().Add(rl.RetryAfter)
		return rateLimited, rl.RetryAfter, rl
	case code == http.StatusInternalServerError, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		if hasRetryAfter {
			return serverError, retryAfter, nil
		}
		return serverError, t.backoff(attempt), nil
	}
	return done, 0, nil
}

// backoff doubles per attempt with jitter, so many clients that failed
// together do not retry together.
func (t *retryTransport) backoff(attempt int) time.Duration {
	d := t.policy.BaseDelay << min(attempt-1, 16)
	if d > t.policy.MaxDelay || d <= 0 {
		d = t.policy.MaxDelay
	}
	return d/2 + rand.N(d/2+1)
}

func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		return time.Duration(max(secs, 0)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// peekBody reads up to limit bytes and puts them back in front of the
// rest, so the caller can still read the whole body.
func peekBody(resp *http.Response, limit int64) []byte {
	if resp.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	return b
}

func drain(resp *http.Response) {
	if resp.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
	}
}

// etagCache makes GETs conditional. GitHub does not count a 304 against
// the primary rate limit, so polling unchanged resources (check runs of a
// commit whose CI has not moved) is nearly free.
type etagCache struct {
	next    http.RoundTripper
	max     int
	maxBody int
	stats   *counters

	mu      sync.Mutex
	order   *list.List // front = most recently used
	entries map[string]*list.Element
}

type cacheEntry struct {
	key    string
	etag   string
	header http.Header
	body   []byte
}

func newETagCache(next http.RoundTripper, size int, stats *counters) *etagCache {
	return &etagCache{next: next, max: size, maxBody: 4 << 20, stats: stats,
		order: list.New(), entries: map[string]*list.Element{}}
}

func (c *etagCache) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" || req.Header.Get("Range") != "" {
		return c.next.RoundTrip(req)
	}
	// Accept is part of the key: one URL answers differently per media
	// type. The token is not: a client has one.
	key := req.URL.String() + "\x00" + req.Header.Get("Accept")
	e := c.get(key)
	r := req
	if e != nil {
		r = req.Clone(req.Context())
		r.Header.Set("If-None-Match", e.etag)
	}
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotModified && e != nil {
		drain(resp)
		c.stats.cacheHits.Add(1)
		h := e.header.Clone()
		for k, v := range resp.Header {
			if strings.HasPrefix(k, "X-Ratelimit-") || k == "Date" || k == "Etag" {
				h[k] = v
			}
		}
		return &http.Response{
			Status: "200 OK", StatusCode: http.StatusOK,
			Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
			Header: h, Body: io.NopCloser(bytes.NewReader(e.body)),
			ContentLength: int64(len(e.body)), Request: req,
		}, nil
	}
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || etag == "" || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) <= c.maxBody {
		c.put(&cacheEntry{key: key, etag: etag, header: resp.Header.Clone(), body: body})
	}
	return resp, nil
}

func (c *etagCache) get(key string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry)
}

func (c *etagCache) put(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.entries[e.key] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.entries, old.Value.(*cacheEntry).key)
	}
}

func (c *etagCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// rewriteTransport sends every request to base (the fake server in tests)
// while go-gh builds URLs for the real host, so the paths it requests —
// /api/v3 for Enterprise included — are exercised as they are.
type rewriteTransport struct {
	base *url.URL
	next http.RoundTripper
}

func (t rewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.base.Scheme, t.base.Host, ""
	return t.next.RoundTrip(r)
}

// Package retry is how the GitHub client waits out rate limits and retries
// server and network errors, following GitHub's guidance: it remembers the
// limits GitHub reports and holds back requests a limit would refuse,
// waits what an answer asks for (Retry-After, a reset), backs off
// exponentially after a 5xx, and retries only what is safe to send twice.
// It works above go-gh, on go-gh's reading of an answer.
package retry

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/cli/go-gh/v2/pkg/api"
)

// Policy bounds how the client waits out server errors and rate limits.
// Zero fields take the defaults.
type Policy struct {
	// MaxAttempts is the number of tries per call, the first included
	// (default 4).
	MaxAttempts int
	// BaseDelay is the first backoff after a 5xx answer or a network
	// error; it doubles per attempt, with 50% jitter (default 1s).
	BaseDelay time.Duration
	// MaxDelay caps the doubling (default 20s).
	MaxDelay time.Duration
	// MaxWait is the longest single wait the client sits through for a
	// rate limit (Retry-After or a reset time). A longer one is returned
	// at once as a *RateLimitError, so the caller can reschedule instead
	// of blocking a worker for up to an hour (default 30s).
	MaxWait time.Duration
}

func (p Policy) withDefaults() Policy {
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

// SleepFunc waits d, or until ctx is done, returning ctx's error then.
type SleepFunc func(ctx context.Context, d time.Duration) error

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

// Call describes one API call to the retrier.
type Call struct {
	// Resource is the rate limit the call counts against: core, graphql.
	Resource string
	// Desc names the call in logs: "GET repos/octo/app/pulls/3".
	Desc string
	// Idempotent: sending the request twice does what sending it once
	// does, so a 5xx or a network error (after which GitHub may have done
	// the work) can be retried. A rate-limited request was not served and
	// is retried either way.
	Idempotent bool
}

// Options configures New. Zero fields take the defaults.
type Options struct {
	Policy Policy
	// Sleep waits between attempts (default: a timer).
	Sleep SleepFunc
	// Now is the clock for rate-limit resets (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Retrier waits out rate limits and retries server and network errors.
// Each attempt is a whole request through the transport stack below. It
// is safe for concurrent use.
type Retrier struct {
	policy Policy
	sleep  SleepFunc
	now    func() time.Time
	limits *limiter
	log    *slog.Logger

	retries, rateLimited atomic.Int64
}

// New returns a Retrier.
func New(opts Options) *Retrier {
	r := &Retrier{policy: opts.Policy.withDefaults(), sleep: opts.Sleep, now: opts.Now, log: opts.Logger}
	if r.sleep == nil {
		r.sleep = sleepCtx
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.limits = newLimiter(r.now)
	return r
}

// Retries is how many requests were sent again after a 5xx, a rate limit
// or a network error.
func (r *Retrier) Retries() int64 { return r.retries.Load() }

// RateLimited is how many rate-limit answers (primary or secondary) came
// back.
func (r *Retrier) RateLimited() int64 { return r.rateLimited.Load() }

// Sleep waits d, or until ctx is done, as the retrier waits between
// attempts.
func (r *Retrier) Sleep(ctx context.Context, d time.Duration) error { return r.sleep(ctx, d) }

// Do runs send until it succeeds, fails for good, or the attempts are
// spent, and returns send's last error as is (go-gh's, or a
// *RateLimitError) for the caller to classify.
func (r *Retrier) Do(ctx context.Context, c Call, send func() error) error {
	if err := r.waitForLimit(ctx, c.Resource); err != nil {
		return err
	}
	wait := &answerBackOff{exp: r.exponential()}
	attempt := 0
	op := func() error {
		attempt++
		err := send()
		if err == nil {
			return nil
		}
		return r.judge(ctx, c, err, attempt, wait)
	}
	policy := backoff.WithContext(backoff.WithMaxRetries(wait, uint64(r.policy.MaxAttempts-1)), ctx)
	notify := func(err error, d time.Duration) {
		r.retries.Add(1)
		r.log.Debug("github: retrying", "call", c.Desc, "attempt", attempt, "wait", d, "after", err)
	}
	timer := &sleepTimer{ctx: ctx, sleep: r.sleep, tick: make(chan time.Time, 1)}
	return backoff.RetryNotifyWithTimer(op, policy, notify, timer)
}

// waitForLimit holds a call back while a limit it already hit is in
// force: sending it would only earn another refusal and, per GitHub's
// docs, risk the integration being banned.
func (r *Retrier) waitForLimit(ctx context.Context, resource string) error {
	rl := r.limits.heldBack(resource)
	switch {
	case rl == nil:
		return nil
	case rl.Wait > r.policy.MaxWait:
		return rl
	}
	return r.sleep(ctx, rl.Wait)
}

// judge decides what a failed attempt means: another try, returning err
// as is after telling wait how long GitHub asked to wait, if it did; or
// the end, returning err wrapped in backoff.Permanent.
func (r *Retrier) judge(ctx context.Context, c Call, err error, attempt int, wait *answerBackOff) error {
	var he *api.HTTPError
	var ge *api.GraphQLError
	var ue *url.Error
	switch {
	case ctx.Err() != nil:
	case errors.As(err, &he):
		return r.judgeAnswer(c, err, he, attempt, wait)
	case errors.As(err, &ge) && slices.ContainsFunc(ge.Errors, func(e api.GraphQLErrorItem) bool { return e.Type == "RATE_LIMITED" }):
		// GraphQL reports its primary limit in the body of a 200; the
		// limiter knows the reset from the answer's headers.
		r.rateLimited.Add(1)
		return backoff.Permanent(r.limits.exhausted(c.Resource))
	case errors.As(err, &ue) && c.Idempotent:
		return err // a network error: back off and try again
	}
	return backoff.Permanent(err)
}

// judgeAnswer follows GitHub's guidance for an error answer: wait out a
// rate limit for as long as it says, back off after a 5xx, and take
// anything else as the answer.
func (r *Retrier) judgeAnswer(c Call, err error, he *api.HTTPError, attempt int, wait *answerBackOff) error {
	now := r.now()
	if rl := rateLimitOf(he, c.Resource, attempt, now); rl != nil {
		r.rateLimited.Add(1)
		if rl.Secondary {
			r.limits.holdAll(rl.Reset)
		}
		return r.waitAtMost(wait, rl.Wait, rl)
	}
	switch he.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if !c.Idempotent {
			return backoff.Permanent(err)
		}
		if d, ok := parseRetryAfter(he.Headers.Get("Retry-After"), now); ok {
			return r.waitAtMost(wait, d, err)
		}
		return err
	}
	return backoff.Permanent(err)
}

// waitAtMost has the next attempt wait d, unless d is longer than MaxWait:
// then the call ends with err, for the caller to reschedule.
func (r *Retrier) waitAtMost(wait *answerBackOff, d time.Duration, err error) error {
	if d > r.policy.MaxWait {
		return backoff.Permanent(err)
	}
	wait.ask(d)
	return err
}

// rateLimitOf reads a 403 or 429 answer: with no requests remaining it is
// the primary limit, lifting at the reset; otherwise a secondary limit,
// lifting after Retry-After, else after at least a minute that grows with
// each attempt. A 403 that says none of this is a permission problem: nil.
func rateLimitOf(he *api.HTTPError, resource string, attempt int, now time.Time) *RateLimitError {
	if he.StatusCode != http.StatusForbidden && he.StatusCode != http.StatusTooManyRequests {
		return nil
	}
	h := he.Headers
	msg := strings.ToLower(he.Message)
	secondary := strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "abuse")
	primary := h.Get("X-RateLimit-Remaining") == "0"
	retryAfter, hasRetryAfter := parseRetryAfter(h.Get("Retry-After"), now)
	if he.StatusCode == http.StatusForbidden && !primary && !secondary && !hasRetryAfter {
		return nil
	}
	rl := &RateLimitError{Secondary: !primary || secondary}
	switch {
	case hasRetryAfter:
		rl.Wait = retryAfter
	case primary:
		rl.Wait = untilReset(h, now)
	default:
		rl.Wait = time.Minute << min(attempt-1, 5)
	}
	if !rl.Secondary {
		rl.Resource = cmp.Or(h.Get("X-RateLimit-Resource"), resource)
	}
	rl.Reset = now.Add(rl.Wait)
	return rl
}

// untilReset is the wait until X-RateLimit-Reset, plus a second for the
// clocks to disagree; a minute if the header is missing.
func untilReset(h http.Header, now time.Time) time.Duration {
	reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		return time.Minute
	}
	return max(time.Unix(reset, 0).Sub(now), 0) + time.Second
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

// exponential is the backoff after an answer that names no wait: doubling
// from BaseDelay up to MaxDelay, each wait drawn from half to one and a
// half of it, so many clients that failed together do not retry together.
// The attempts bound a call, not the time it takes.
func (r *Retrier) exponential() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(r.policy.BaseDelay),
		backoff.WithMaxInterval(r.policy.MaxDelay),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0),
	)
}

// answerBackOff is a backoff.BackOff that waits what GitHub's last answer
// asked for (Retry-After, a rate-limit reset), and backs off exponentially
// when it asked for nothing.
type answerBackOff struct {
	exp    *backoff.ExponentialBackOff
	asked  time.Duration
	hasAsk bool
}

func (b *answerBackOff) ask(d time.Duration) { b.asked, b.hasAsk = d, true }

func (b *answerBackOff) Reset() {
	b.exp.Reset()
	b.hasAsk = false
}

func (b *answerBackOff) NextBackOff() time.Duration {
	if b.hasAsk {
		b.hasAsk = false
		return b.asked
	}
	return b.exp.NextBackOff()
}

// sleepTimer is a backoff.Timer that waits through the retrier's sleep
// (Options.Sleep), so tests see every wait without sitting through it.
// Start returns when the wait is over; the tick is then ready, unless ctx
// ended the wait, and backoff returns ctx's error.
type sleepTimer struct {
	ctx   context.Context
	sleep SleepFunc
	tick  chan time.Time
}

func (t *sleepTimer) Start(d time.Duration) {
	if err := t.sleep(t.ctx, d); err != nil && t.ctx.Err() != nil {
		return
	}
	t.tick <- time.Time{}
}

func (t *sleepTimer) Stop() {}

func (t *sleepTimer) C() <-chan time.Time { return t.tick }

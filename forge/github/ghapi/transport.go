package ghapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/forge/github/ghapi/retry"
)

// The transport stack under go-gh, top down: etag.Cache, meter,
// answerWait, rewriteTransport (tests), the network. Each layer hands every answer up
// as a response, whatever its status: judging answers and retrying is the
// retrier's, above go-gh.

// meter counts the requests that go to the network and records the
// rate-limit headers of their answers. It only watches.
type meter struct {
	next     http.RoundTripper
	requests *atomic.Int64
	counts   *resourceCounts
	limits   *retry.Retrier
}

func (m meter) RoundTrip(req *http.Request) (*http.Response, error) {
	m.requests.Add(1)
	m.counts.add(resourceOf(req.URL.Path))
	resp, err := m.next.RoundTrip(req)
	if err == nil {
		m.limits.Record(resourceOf(req.URL.Path), resp.Header)
	}
	return resp, err
}

// resourceOf is the rate-limit resource a request to path counts against,
// for answers that do not name it.
func resourceOf(path string) string {
	if strings.HasSuffix(path, "/graphql") {
		return "graphql"
	}
	return "core"
}

// resourceCounts counts the requests sent, per rate-limit resource.
type resourceCounts struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *resourceCounts) add(resource string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[resource]++
}

func (c *resourceCounts) all() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.n))
	for r, n := range c.n {
		out[r] = n
	}
	return out
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

// DefaultAnswerTimeout is how long a request waits for GitHub's answer to
// begin when Options.AnswerTimeout is 0. GitHub ends a request it could
// not serve in 10 seconds with an error of its own (its REST docs,
// "Timeouts"), so an answer not begun in three times that will not come.
const DefaultAnswerTimeout = 30 * time.Second

// answerWait gives up a request whose answer has not begun (its status
// and headers) within d, as a network error: the retrier sends it again
// where that is safe, and otherwise the caller hears of it. Without it a
// request GitHub never answers holds its caller for good: go-gh sets no
// timeout, and the controller's passes run on a context no stop cancels.
// The body is not timed: a job's log may take long to read.
type answerWait struct {
	next http.RoundTripper
	d    time.Duration
}

func (t answerWait) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	timer := time.AfterFunc(t.d, cancel)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if !timer.Stop() && req.Context().Err() == nil {
		if err == nil {
			_ = resp.Body.Close()
		}
		cancel()
		return nil, noAnswerError{t.d}
	}
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// noAnswerError is a request given up by answerWait.
type noAnswerError struct{ d time.Duration }

func (e noAnswerError) Error() string { return fmt.Sprintf("no answer from GitHub within %s", e.d) }

// Timeout says it is one, as net/http's own timeouts do.
func (noAnswerError) Timeout() bool { return true }

// cancelOnClose ends a request's context once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

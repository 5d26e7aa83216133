package ghapi

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agenttree/agenttree/forge/github/ghapi/retry"
)

// The transport stack under go-gh, top down: etag.Cache, meter,
// rewriteTransport (tests), the network. Each layer hands every answer up
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

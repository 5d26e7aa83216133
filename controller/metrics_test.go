package controller

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/metrics"
	"github.com/agenttree/agenttree/controller/ratelimit"
	ghforge "github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
	ghwatch "github.com/agenttree/agenttree/forge/github/watch"
	"github.com/agenttree/agenttree/internal/statedir"
)

// scrape is what the metrics handler serves, parsed as Prometheus reads it.
func scrape(t *testing.T, m *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	require.NoError(t, err, rec.Body.String())
	return families
}

// value is the value of family name's metric whose labels include
// labels (name=value pairs); it fails when there is none.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f, ok := families[name]
	require.True(t, ok, "no family %s", name)
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	require.Failf(t, "no metric", "%s%v", name, labels)
	return 0
}

// After real ticks over the fake GitHub, the handler serves every family,
// with the requests GitHub counted, its quota as its headers said, the
// issue waiting and its step back.
func TestMetricsAfterTicksOverGitHub(t *testing.T) {
	r := newGitHubRig(t)
	m := metrics.New(r.c.Engine)
	r.c.Metrics = m
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	r.srv.SetRateLimit(edge.GraphQL, 5000, 4321, reset)
	id, _, run := r.waitingOnCI(t, 1)
	r.tick(t)
	r.srv.CompleteCheckRun(run, "failure")
	r.tick(t)
	iss, err := r.e.Store.Get(id)
	require.NoError(t, err)
	require.Equal(t, "implement", iss.Stage, "CI's failure stepped the issue back")

	got := scrape(t, m)
	for _, name := range []string{"agenttree_tick_duration_seconds", "agenttree_issues_due", "agenttree_issues_waiting",
		"agenttree_issues_longest_wait_seconds", "agenttree_transitions_total", "agenttree_step_backs_total",
		"agenttree_escalations_total", "agenttree_tmux_deliveries_total", "agenttree_github_requests_total",
		"agenttree_github_etag_hits_total", "agenttree_github_quota_remaining", "agenttree_github_quota_reset_timestamp_seconds"} {
		assert.Contains(t, got, name)
	}
	assert.EqualValues(t, 2, value(t, got, "agenttree_tick_duration_seconds"), "two ticks observed")
	assert.EqualValues(t, 1, value(t, got, "agenttree_issues_due"))
	assert.EqualValues(t, 1, value(t, got, "agenttree_step_backs_total", "kind", "ci_failed"))
	assert.EqualValues(t, 1, value(t, got, "agenttree_transitions_total", "from", "pr_ready", "to", "implement"))
	assert.EqualValues(t, 1, value(t, got, "agenttree_issues_waiting", "on", "person"), "no agent runs at implement: a person starts one")
	assert.Positive(t, value(t, got, "agenttree_issues_longest_wait_seconds", "on", "person"))

	graphql, total := 0, 0
	for _, c := range r.srv.Counts() {
		total += c.Requests
		if strings.Contains(c.Endpoint, "graphql") {
			graphql += c.Requests
		}
	}
	require.Positive(t, graphql)
	assert.EqualValues(t, graphql, value(t, got, "agenttree_github_requests_total", "resource", "graphql"), "the fake's counts: %v", r.srv.Counts())
	sum := 0.0
	for _, m := range got["agenttree_github_requests_total"].GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	assert.EqualValues(t, total, sum, "every request counted once, by resource")
	assert.EqualValues(t, 4321-graphql, value(t, got, "agenttree_github_quota_remaining", "resource", "graphql"), "the quota GitHub's last answer said")
	assert.EqualValues(t, reset.Unix(), value(t, got, "agenttree_github_quota_reset_timestamp_seconds", "resource", "graphql"))
}

// A quota GitHub says is spent is recorded for `agenttree status`, with
// its resource and reset, and the record goes once the quota is back.
func TestATickRecordsTheForgesRateLimit(t *testing.T) {
	r := newGitHubRig(t)
	r.waitingOnCI(t, 1)
	r.tick(t)
	_, limited := ratelimit.Read(r.e.Store.Root(), time.Now())
	require.False(t, limited, "nothing is limited yet")

	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	r.srv.SetRateLimit(edge.GraphQL, 5000, 0, reset)
	r.now = r.now.Add(time.Hour) // the PR's poll is due
	r.tick(t)
	rl, limited := ratelimit.Read(r.e.Store.Root(), time.Now())
	require.True(t, limited, "the spent quota is recorded")
	assert.Equal(t, "graphql", rl.Resource)
	assert.True(t, reset.Equal(rl.Until), "until %s, want %s", rl.Until, reset)
	_, limited = ratelimit.Read(r.e.Store.Root(), reset)
	assert.False(t, limited, "a limit is over at its reset")

	// Past the reset the forge's limit no longer holds.
	r.c.limit.Record(r.e.Forge, r.e.Store.Root(), reset.Add(time.Second), r.c.log())
	assert.NoFileExists(t, statedir.Layout{Root: r.e.Store.Root()}.RateLimit(), "the record is gone once no limit holds")
}

// With GitHub's webhooks on, the deliveries the controller's watch had
// are counted: the hook's ping accepted, an unsigned one refused.
func TestMetricsCountWebhookDeliveries(t *testing.T) {
	r := newGitHubRig(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	f, err := ghwatch.Open(t.Context(), ghforge.Options{Repo: r.srv.Owner + "/" + r.srv.Name, Host: "github.com", Token: r.srv.Token, BaseURL: r.srv.URL},
		ghwatch.Events{Mode: ghwatch.ModeWebhook, URL: "http://" + addr + "/", Listen: addr, StateDir: t.TempDir(), CheckEvery: time.Hour})
	require.NoError(t, err)
	r.e.Forge = f
	m := metrics.New(r.c.Engine)
	r.c.Metrics, r.c.Interval = m, 50*time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.c.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	require.Eventually(t, func() bool {
		return value(t, scrape(t, m), "agenttree_webhook_deliveries_total", "result", "accepted") >= 1
	}, 20*time.Second, 50*time.Millisecond, "the hook's ping is accepted")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/", strings.NewReader(`{"action":"opened","pull_request":{"number":1}}`))
	require.NoError(t, err)
	req.Header.Set("X-GitHub-Event", "pull_request")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	got := scrape(t, m)
	assert.EqualValues(t, 1, value(t, got, "agenttree_webhook_deliveries_total", "result", "refused"))
	assert.EqualValues(t, 0, value(t, got, "agenttree_webhook_gaps_filled_total"))
	assert.Positive(t, value(t, got, "agenttree_tick_duration_seconds"))
}

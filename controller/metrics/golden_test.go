package metrics

import (
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/watch"
	"github.com/agenttree/agenttree/forge/github/webhook"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/sessions/waiton"
)

// goldenPath is /metrics as client_golang v1.25.0 wrote it for
// goldenState, its go_ and process_ families left out: what a scraper
// reads must not change with the code that writes it.
const goldenPath = "testdata/metrics.golden"

// fakeForge counts as the GitHub forge with its events on would, with
// resources named as no GitHub resource is, so their escaping shows.
type fakeForge struct{ forge.Forge }

func hostileResources() []string {
	return []string{"core", `quo"te`, `back\slash`, "new\nline", "ütf-8 ✓"}
}

func (fakeForge) Stats() ghapi.Stats {
	by := map[string]int64{}
	for i, r := range hostileResources() {
		by[r] = int64(10 * (i + 1))
	}
	return ghapi.Stats{Requests: 150, ByResource: by, CacheHits: 7, RateLimited: 2}
}

func (fakeForge) RateLimits() []ghapi.RateLimit {
	reset := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	var rls []ghapi.RateLimit
	for i, r := range hostileResources() {
		rl := ghapi.RateLimit{Resource: r, Remaining: 4321 - i}
		if i%2 == 0 { // a limit and a reset the answer did not say are left out
			rl.Limit, rl.Reset = 5000, reset.Add(time.Duration(i)*time.Minute)
		}
		rls = append(rls, rl)
	}
	return rls
}

func (fakeForge) WatchStats() watch.WatchStats {
	return watch.WatchStats{Stats: webhook.Stats{Accepted: 12, Refused: 3}, GapsFilled: 1}
}

func (fakeForge) Requests() int64 { return 42 }

// goldenState is the metrics of a pipeline with issues moved, waiting
// 90 s on a person, ticks of every bucket's size and deliveries made.
func goldenState(t *testing.T) *Metrics {
	t.Helper()
	e := newEngine(t)
	e.Forge = fakeForge{}
	m := New(func() (*engine.Engine, error) { return e, nil })
	var ids []int
	for _, title := range []string{"Add login page", "Add logout page"} {
		iss, err := e.Create(t.Context(), engine.NewIssue{Title: title, Stage: "implementation_review"})
		require.NoError(t, err)
		ids = append(ids, iss.ID)
	}
	iss, err := e.Create(t.Context(), engine.NewIssue{Title: "Add settings page", Stage: "implement.code"})
	require.NoError(t, err)
	ids = append(ids, iss.ID)
	for _, to := range []string{"security", "implementation_review"} {
		_, err := people.Move(t.Context(), e, iss.ID, engine.Actor{Kind: engine.ActorHuman}, to, "by hand")
		require.NoError(t, err)
	}
	var first time.Time
	for _, id := range ids {
		iss, err := e.Store.Get(id)
		require.NoError(t, err)
		w := waiton.On(e.Config, iss, nil, waiton.LookAtAgents(context.Background(), e))
		require.Equal(t, waiton.WaiterPerson, w.Who)
		if at := cmp.Or(w.Since, waiton.Entered(iss)); first.IsZero() || at.Before(first) {
			first = at
		}
	}
	m.pipe.now = func() time.Time { return first.Add(90 * time.Second) }

	stepBack := &engine.Result{}
	stepBack.Outcome.Status, stepBack.Outcome.Failure = engine.StatusSteppedBack, hooks.ClassCIFailed
	escalated := &engine.Result{}
	escalated.Outcome.Status, escalated.Outcome.Escalation = engine.StatusEscalated, &issues.Escalation{Kind: issues.EscalatedBudget}
	for _, took := range []time.Duration{3 * time.Millisecond, 25 * time.Millisecond, 200 * time.Millisecond, 7 * time.Second, 400 * time.Second} {
		m.Tick(took, 2, []*engine.Result{stepBack, escalated})
	}
	m.Tick(time.Second, 3, nil)
	m.Delivered([]outbox.Message{
		{To: outbox.ToAgent, State: outbox.Sent, Attempts: 1},
		{To: outbox.ToAgent, State: outbox.Sent, Attempts: 3},
		{To: outbox.ToAgent, State: outbox.Untaken, Attempts: 2},
	})
	return m
}

// serve is what m's handler answers a scrape: its status, its
// Content-Type and its body.
func serve(t *testing.T, m *Metrics) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()
}

// withoutRuntime leaves out the go_ and process_ families client_golang
// added of its own, which no state makes the same twice.
func withoutRuntime(text string) string {
	var b strings.Builder
	for line := range strings.SplitAfterSeq(text, "\n") {
		name := strings.TrimPrefix(strings.TrimPrefix(line, "# HELP "), "# TYPE ")
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// The whole of /metrics is as client_golang wrote it for the same state:
// names, help, types, label escaping, histogram buckets and the order of
// families and series. AGENTTREE_UPDATE_GOLDEN=1 writes the file.
func TestMetricsTextIsAsClientGolangWroteIt(t *testing.T) {
	code, contentType, body := serve(t, goldenState(t))
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8; escaping=underscores", contentType, "as client_golang said it")
	got := withoutRuntime(body)
	if os.Getenv("AGENTTREE_UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.MkdirAll(filepath.Dir(goldenPath), 0o755))
		require.NoError(t, os.WriteFile(goldenPath, []byte(got), 0o644))
	}
	want, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}

// scrape is what the handler serves, parsed as Prometheus reads it.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	code, _, body := serve(t, m)
	require.Equal(t, http.StatusOK, code, body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err, body)
	return families
}

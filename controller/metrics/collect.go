package metrics

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/watch"
	"github.com/agenttree/agenttree/internal/promtext"
	"github.com/agenttree/agenttree/sessions/waiton"
)

// pipeline reads the issues' files when scraped: who each waits on and
// for how long (as `agenttree status` says it), and the moves their
// histories hold.
//
// The moves are a counter, which must never go down (a rate over it would
// read a decrease as a restart): each history entry is counted once, when
// a scrape first reads it, under the labels the config gave it then, and
// stays counted when its issue is removed or its stage leaves the config.
// The histories are what is counted, not the controller's own moves: an
// agent's `next` through the socket, a person's command in another
// process and the board's actions all append to them.
type pipeline struct {
	load                          func() (*engine.Engine, error)
	now                           func() time.Time
	waiting, longest, transitions *promtext.Desc

	mu sync.Mutex
	// counted is how many entries of each issue's history are counted
	// in moves; an issue's id is never given to another.
	counted map[int]int
	moves   map[[2]string]int
}

func newPipeline(load func() (*engine.Engine, error)) *pipeline {
	return &pipeline{load: load, now: time.Now, counted: map[int]int{}, moves: map[[2]string]int{},
		waiting: promtext.NewDesc("agenttree_issues_waiting",
			"Issues waiting, by who moves them on (person, agent, controller), as `agenttree status` says.", promtext.Gauge, "on"),
		longest: promtext.NewDesc("agenttree_issues_longest_wait_seconds",
			"The longest an issue has waited, by who moves it on: since it reached its stage, or since what it waits on began.", promtext.Gauge, "on"),
		transitions: promtext.NewDesc("agenttree_transitions_total",
			"Moves between stages the issues' histories hold, by from and to stage (stages the config does not name are \"other\", an issue's creation is from \"(new)\"). "+
				"Each move is counted once, when a scrape first reads it (the first scrape counts every move already made), and stays counted when its issue is removed: it never goes down while the process runs.", promtext.Counter, "from", "to"),
	}
}

// collect adds the pipeline's families to a scrape; with no pipeline to
// read it adds none of them, as client_golang left them out on an error.
func (p *pipeline) collect(s *promtext.Sink) {
	e, err := p.load()
	if err != nil {
		return
	}
	listed, err := e.Store.Scan()
	if err != nil {
		return
	}
	now := p.now()
	agents := waiton.LookAtAgents(context.Background(), e)
	waiters := []waiton.Waiter{waiton.WaiterPerson, waiton.WaiterAgent, waiton.WaiterController}
	count, longest := map[waiton.Waiter]int{}, map[waiton.Waiter]time.Duration{}
	stage := func(name string) string {
		if name == "" {
			return "(new)"
		}
		if _, ok := e.Config.Node(name); ok {
			return name
		}
		return "other"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range listed {
		if l.Err != nil {
			continue
		}
		// A history shorter than counted was put back (a backup
		// restored): what it lost stays counted, as it happened, and
		// what it gains from there on are moves made again.
		history := l.Issue.History
		for _, h := range history[min(p.counted[l.ID], len(history)):] {
			p.moves[[2]string{stage(h.From), stage(h.To)}]++
		}
		p.counted[l.ID] = len(history)
		var poll *issues.Poll
		if l.Watch != nil {
			poll = l.Watch.Poll
		}
		w := waiton.On(e.Config, l.Issue, poll, agents)
		if w.Who == waiton.WaiterNobody {
			continue
		}
		count[w.Who]++
		longest[w.Who] = max(longest[w.Who], now.Sub(cmp.Or(w.Since, waiton.Entered(l.Issue))))
	}
	for _, who := range waiters {
		s.Add(p.waiting, float64(count[who]), string(who))
		s.Add(p.longest, longest[who].Seconds(), string(who))
	}
	for m, n := range p.moves {
		s.Add(p.transitions, float64(n), m[0], m[1])
	}
}

// forgeStats reads what the forge counted when scraped: GitHub's
// requests, ETag hits, quota and webhook deliveries, or the requests the
// local forge counts as GitHub would. It asks the forge nothing.
type forgeStats struct {
	load func() (*engine.Engine, error)

	requests, etag, limited, remaining, quota, reset, deliveries, gaps, local *promtext.Desc
}

// gitHubForge is the GitHub forge's counts (forge/github.Client).
type gitHubForge interface {
	Stats() ghapi.Stats
	RateLimits() []ghapi.RateLimit
}

// watchingForge is a GitHub forge with its events on.
type watchingForge interface {
	WatchStats() watch.WatchStats
}

func newForgeStats(load func() (*engine.Engine, error)) *forgeStats {
	return &forgeStats{load: load,
		requests: promtext.NewDesc("agenttree_github_requests_total",
			"Requests sent to GitHub (retries included), by the rate-limit resource they count against.", promtext.Counter, "resource"),
		etag: promtext.NewDesc("agenttree_github_etag_hits_total",
			"GitHub's answers of 304 Not Modified, served from the ETag cache (free of quota).", promtext.Counter),
		limited: promtext.NewDesc("agenttree_github_rate_limited_total",
			"GitHub's answers that were a rate limit, primary or secondary.", promtext.Counter),
		remaining: promtext.NewDesc("agenttree_github_quota_remaining",
			"Requests left in GitHub's quota, by resource, as its last answer said.", promtext.Gauge, "resource"),
		quota: promtext.NewDesc("agenttree_github_quota_limit",
			"GitHub's quota per window, by resource, as its last answer said.", promtext.Gauge, "resource"),
		reset: promtext.NewDesc("agenttree_github_quota_reset_timestamp_seconds",
			"When GitHub's quota window resets, by resource (Unix time), as its last answer said.", promtext.Gauge, "resource"),
		deliveries: promtext.NewDesc("agenttree_webhook_deliveries_total",
			"Webhook deliveries the receiver had: accepted (signed with the secret), refused (unsigned, badly signed, too large, not a POST).", promtext.Counter, "result"),
		gaps: promtext.NewDesc("agenttree_webhook_gaps_filled_total",
			"Gaps in webhook deliveries filled from GitHub's Webhook Deliveries API.", promtext.Counter),
		local: promtext.NewDesc("agenttree_local_forge_requests_total",
			"Requests the local forge was asked, counted as GitHub would count them.", promtext.Counter),
	}
}

// collect adds the forge's families, those its kind of forge counts.
func (f *forgeStats) collect(s *promtext.Sink) {
	e, err := f.load()
	if err != nil || e.Forge == nil {
		return
	}
	if gh, ok := forge.As[gitHubForge](e.Forge); ok {
		st := gh.Stats()
		for resource, n := range st.ByResource {
			s.Add(f.requests, float64(n), resource)
		}
		s.Add(f.etag, float64(st.CacheHits))
		s.Add(f.limited, float64(st.RateLimited))
		for _, rl := range gh.RateLimits() {
			s.Add(f.remaining, float64(rl.Remaining), rl.Resource)
			if rl.Limit > 0 {
				s.Add(f.quota, float64(rl.Limit), rl.Resource)
			}
			if !rl.Reset.IsZero() {
				s.Add(f.reset, float64(rl.Reset.Unix()), rl.Resource)
			}
		}
	}
	if w, ok := forge.As[watchingForge](e.Forge); ok {
		st := w.WatchStats()
		s.Add(f.deliveries, float64(st.Accepted), "accepted")
		s.Add(f.deliveries, float64(st.Refused), "refused")
		s.Add(f.gaps, float64(st.GapsFilled))
	}
	if rc, ok := forge.As[forge.RequestCounter](e.Forge); ok {
		s.Add(f.local, float64(rc.Requests()))
	}
}

package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
	"gopkg.in/yaml.v3"
)

// settings are what a benchmark's pipeline changes from the defaults.
type settings struct {
	// poll fixes CI polling at this interval (poll, minimum and maximum);
	// 0 keeps the adaptive defaults (30 s growing to 300 s).
	poll time.Duration
	// tick is controller.interval_s; 0 keeps the default (10 s).
	tick time.Duration
	// socket is tmux.socket; empty keeps the default server.
	socket string
}

// configYAML is the pipeline the benchmarks run: pr_ready is a controller
// stage whose only entry hook waits for CI, and a failure steps the issue
// back to implement with the reason. The issues are placed at pr_ready
// with their PR already open, so the controller has nothing to do but
// watch CI.
func configYAML(s settings) ([]byte, error) {
	// The hooks run on the wall clock while the steady state runs the
	// controller's clock over hours in minutes: no CI wait may time out
	// meanwhile, so the timeouts are a day.
	polling := map[string]any{"timeout_s": 86400, "new_run_timeout_s": 86400}
	if s.poll > 0 {
		n := max(int(s.poll/time.Second), 1)
		polling["poll_interval_s"], polling["min_interval_s"], polling["max_interval_s"] = n, n, n
	}
	doc := map[string]any{
		"project":    "bench",
		"forge":      "github",
		"ci_polling": polling,
		"stages": []map[string]any{
			{"name": "implement"},
			{"name": "pr_ready", "host": "controller",
				"post_start": []map[string]any{{"wait_for_ci": nil}},
				"on_failure": map[string]any{"step_back_to": "implement", "message": "{{failure_reason}}"}},
			{"name": "implementation_review", "human_review": true},
			{"name": "accepted", "terminal": "completion"},
		},
	}
	if s.tick > 0 {
		doc["controller"] = map[string]any{"interval_s": max(int(s.tick/time.Second), 1)}
	}
	if s.socket != "" {
		doc["tmux"] = map[string]any{"socket": s.socket}
	}
	return yaml.Marshal(doc)
}

// pipeline is a directory holding a config and its state directory, on
// the fake GitHub's repository.
type pipeline struct {
	config string // path of .agenttree.yaml
	srv    *githubtest.Server
	forge  forge.Forge
	eng    *engine.Engine // for placing issues
}

// waiting is an issue placed at pr_ready, waiting on CI.
type waiting struct {
	id    int
	pr    int
	head  string
	check int64 // its check run, in progress until a run ends it
}

// newPipeline writes the config into dir and opens its engine.
func newPipeline(dir string, s settings, srv *githubtest.Server, f forge.Forge) (*pipeline, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := &pipeline{config: filepath.Join(dir, stages.FileName), srv: srv, forge: f}
	config, err := configYAML(s)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.config, config, 0o644); err != nil {
		return nil, err
	}
	e, err := p.load()
	if err != nil {
		return nil, err
	}
	p.eng = e
	return p, nil
}

// load opens the engine as the CLI does, on the pipeline's forge: the
// controller's Load.
func (p *pipeline) load() (*engine.Engine, error) {
	return openEngine(p.config, p.forge)
}

// openEngine loads config and opens the state directory beside it, with
// forge f and git in the work trees.
func openEngine(config string, f forge.Forge) (*engine.Engine, error) {
	reg := builtin.Registry()
	cfg, err := load.File(config, reg)
	if err != nil {
		return nil, fmt.Errorf("the benchmark's config %s does not load: %w", config, err)
	}
	store, err := issues.Open(filepath.Join(filepath.Dir(config), "_agenttree"))
	if err != nil {
		return nil, err
	}
	return engine.New(cfg, store, reg, nil, engine.WithForge(f),
		engine.WithGit(func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} })), nil
}

// addWaiting places an issue at pr_ready whose PR is open on the fake,
// its head with one check run in progress, and whose entry work (the
// wait for CI) is the controller's to continue.
func (p *pipeline) addWaiting(ctx context.Context, title string) (waiting, error) {
	iss, err := p.eng.Create(ctx, engine.NewIssue{Title: title, Stage: "pr_ready"})
	if err != nil {
		return waiting{}, err
	}
	if iss.EntryPending == nil {
		return waiting{}, fmt.Errorf("issue %d at pr_ready has no entry work pending; the controller would not wait for its CI", iss.ID)
	}
	w := waiting{id: iss.ID, head: fakeSHA(p.config, iss.ID)}
	w.pr = p.srv.AddPR(githubtest.PR{Title: title, Branch: iss.Branch, HeadSHA: w.head})
	w.check = p.srv.AddCheckRun(w.head, githubtest.CheckRun{Name: "test", Status: "in_progress"})
	_, err = p.eng.Store.Update(ctx, iss.ID, iss.Version, func(i *issues.Issue) error {
		i.PRNumber, i.HeadSHA = w.pr, w.head
		return nil
	})
	return w, err
}

// fakeSHA is a commit id of its own for issue id of the pipeline whose
// config is at config: pipelines share the fake's repository.
func fakeSHA(config string, id int) string {
	sum := sha1.Sum([]byte(config + "#" + strconv.Itoa(id)))
	return hex.EncodeToString(sum[:])
}

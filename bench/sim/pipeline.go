//go:build etcd

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
)

// The stages of the simulated pipeline.
const (
	stageImplement = "implement"
	stageReady     = "pr_ready"
	stageReview    = "implementation_review"
	stageAccepted  = "accepted"
)

// openPRHook opens the issue's PR on the forge, or finds the one opened
// before: create_pr without its push, which the simulated agent makes on
// the fake itself (a branch moved, not a git push: there is no git
// server behind the fake).
const openPRHook = "sim_open_pr"

// configYAML is testdata/pipelines/controller-merges.yaml on GitHub: the
// agent's implement, the controller's pr_ready that opens the PR and
// waits for CI, stepping back on a failure, a person's review whose
// approval (engine.Approve, with the PR approved on the forge) moves it
// to accepted, where the controller merges it. The limits that would call
// a person (CI failures, the breaker) are out of reach, and the CI waits
// last a month: the hooks keep the wall clock while the controller's runs
// a day in minutes.
func configYAML() ([]byte, error) {
	month := 30 * 86400
	doc := map[string]any{
		"project":         "sim",
		"forge":           "github",
		"ci_polling":      map[string]any{"timeout_s": month, "new_run_timeout_s": month, "max_retries": 1000},
		"circuit_breaker": map[string]any{"half_open_after": 1000, "no_progress_threshold": 1000, "same_error_threshold": 1000},
		"stages": []map[string]any{
			{"name": stageImplement},
			{"name": stageReady, "host": "controller",
				"post_start":     []map[string]any{{openPRHook: nil}, {"wait_for_ci": map[string]any{"on_failure": "step_back"}}},
				"pre_completion": []map[string]any{{"pr_ci_passed": nil}},
				"on_failure":     map[string]any{"step_back_to": stageImplement, "message": "{{failure_reason}}", "max_retries": 1000}},
			{"name": stageReview, "human_review": true,
				"pre_completion": []map[string]any{{"pr_approved": nil}}},
			{"name": stageAccepted, "terminal": "completion", "host": "controller",
				"post_start": []map[string]any{{"merge_pr": nil}}},
		},
	}
	return yaml.Marshal(doc)
}

// writeConfig writes the pipeline into dir and returns its path.
func writeConfig(dir string) (string, error) {
	data, err := configYAML()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, stages.FileName)
	return path, os.WriteFile(path, data, 0o644)
}

// registry is the built-in hooks and openPRHook.
func registry() *hooks.Registry {
	r := builtin.Registry()
	r.Register(hooks.Def{HookSpec: stages.HookSpec{Name: openPRHook, Outputs: []string{"pr_number", "pr_url", "head_sha"},
		Doc: "Opens the issue's PR from its branch as it is on the forge, or finds the one opened before (bench/sim)."}, Run: openPR})
	return r
}

func openPR(ctx context.Context, c *hooks.Call) hooks.Outcome {
	if c.Env == nil || c.Env.Forge == nil {
		return hooks.Failf("%s needs a forge", openPRHook)
	}
	pr, _, err := c.Env.Forge.EnsurePR(ctx, forge.NewPR{Branch: c.Issue.Branch, Base: "main",
		Title: c.Issue.Title, Body: fmt.Sprintf("Issue %d", c.Issue.ID)})
	if err != nil {
		// Waited out, as hooks/pr waits out a forge that fails: the
		// controller looks again after a poll interval.
		o := hooks.Pending(c.Settings().CIPolling.PollInterval, fmt.Sprintf("opening the PR of %s failed (will retry): %v", c.Issue.Branch, err))
		o.Class = hooks.ClassForge
		return o
	}
	out := hooks.Pass()
	out.Outputs = map[string]string{"pr_number": strconv.Itoa(pr.Number), "pr_url": pr.URL, "head_sha": pr.HeadSHA}
	return out
}

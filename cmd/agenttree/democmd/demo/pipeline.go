package demo

import (
	"fmt"
	"strconv"
)

// pipeline is the reference pipeline (README.md), shortened, on
// the local forge, with
// the scripted agent as the developer (`agenttree` is on the PATH the demo
// gives its commands). CI wants ok.txt, which the agent adds when told CI
// failed.
func pipeline(tmuxSocket string, fast bool) string {
	poll, interval := 2, 1
	if fast {
		poll = 1
	}
	return fmt.Sprintf(`# The demo's pipeline: the reference pipeline shortened (no backlog, implement
# in one stage, no abandon stage), on the local forge.
project: shop
forge: local
ci:
  command: test -f ok.txt
ci_polling:
  poll_interval_s: %[2]d
  min_interval_s: 1
  max_interval_s: %[2]d
  max_retries: 3
controller:
  interval_s: %[3]d
tmux:
  socket: %[1]s
agents:
  scripted:
    command: agenttree demo-agent
roles:
  developer:
    agents: [scripted]
stages:
  - name: implement
    pre_completion:
      - has_commits:
  - name: pr_ready
    host: controller
    post_start:
      - create_pr:
      - wait_for_ci: {on_failure: step_back}
      - check_conflicts: {on_conflict: step_back}
    pre_completion:
      - pr_ci_passed:
      - pr_mergeable:
    on_failure:
      step_back_to: implement
      message: "{{failure_reason}}"
  - name: implementation_review
    human_review: true
    pre_completion:
      - pr_approved:
  - name: accepted
    terminal: completion
    post_start:
      - merge_pr:
  - name: not_doing
    terminal: abandon
    redirect_only: true
`, strconv.Quote(tmuxSocket), poll, interval)
}

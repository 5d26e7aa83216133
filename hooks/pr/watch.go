package pr

import (
	"context"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

var watchIntervalParam = hooks.Duration("interval",
	"how often the controller looks at the PR while the stage is worked on; unset: ci_polling.poll_interval_s")

// watchPolicyParams are what poll_pr_status does about what it sees. They
// take the forms of on_failure (an action, or a list of hook entries
// ending in one), which no typed parameter holds: the loader reads them as
// policies, and the engine applies them.
var watchPolicyParams = []stages.Param{
	{Name: "on_ci_failure", Type: stages.ParamAny,
		Doc: "what a CI failure on the PR's head does, in the forms of on_failure; unset: the stage's on_failure, else ci_polling's defaults"},
	{Name: "on_conflict", Type: stages.ParamAny,
		Doc: "what a merge conflict with the base does, in the forms of on_failure; unset: the stage's on_failure, else conflict_handling's defaults"},
}

// pollPRStatus asks the controller to watch the PR in the
// background while an agent or a person works in the stage. It never
// blocks: the watching is the controller's, and what it finds goes to the
// entry's policies.
func pollPRStatus(_ context.Context, c *hooks.Call) hooks.Outcome {
	interval := watchIntervalParam.Or(c, c.Settings().CIPolling.PollInterval)
	return withOutputs(hooks.Pass(), map[string]string{"watch_pr": "true", "watch_interval": interval.String()})
}

package transition

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// outWatched remembers, on the issue, the head and kind of failure a
// background watch last acted on, so one failure is acted on once.
const outWatched = "watch_acted_on"

// actOnWatch acts on what a background watch found (o, routed by the
// watcher's policies), once per head and kind of failure: the mark that
// says so is written with the move it made, or after the messages it
// queued (keyed by the same mark, so a crash in between sends nothing
// twice).
func (t *Transition) actOnWatch(iss *issues.Issue, node *stages.Node, seq *sequence, o hooks.Outcome, base act.Result) (*act.Result, error) {
	acted := fmt.Sprintf("%s %s", cmp.Or(o.Outputs["head_sha"], seq.snap.HeadSHA), o.Class)
	if iss.Outputs[outWatched] == acted {
		base.Reasons = []string{"already acted on: " + o.Reason}
		return &base, nil
	}
	mark := map[string]string{outWatched: acted}
	f := findings{issue: iss, scope: strings.ReplaceAll(acted, " ", "-")}
	if policy.Jumps(o) {
		if h := t.onward(node, node, o, seq); h != nil {
			h.outputs, mark = policy.MergeOutputs(h.outputs, mark), nil
			j := t.drive(iss, node, *h, false)
			j.gate.said.add(seq.said)
			f.journey = &j
		}
	}
	if f.journey == nil {
		f.wait, f.said = o.Reason, seq.said
	}
	res := f.result(base, false)
	if err := t.settle(f, &res, len(iss.History)); err != nil {
		return nil, err
	}
	if mark != nil {
		cur, err := t.tx.Get()
		if err != nil {
			return nil, err
		}
		// The controller reuses the issue it scanned only at the version
		// the command left it (Outcome.Version), so the mark's write counts.
		saved, warn := t.save(cur, mark, nil)
		res.Version, res.Warnings = saved.Version, append(res.Warnings, warn...)
	}
	return &res, nil
}

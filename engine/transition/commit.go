package transition

import (
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/stages"
)

// commit writes the move h from iss's stage, if nobody changed the issue
// since it was read (its version). When the new stage has entry hooks
// (entering it as from h.from), the same write marks them pending, so a
// crash or a failure leaves them to run again from the same place.
func (t *Transition) commit(iss *issues.Issue, h hop) (*issues.Issue, error) {
	return t.tx.Update(iss.Version, func(cur *issues.Issue) error {
		from := cur.Stage
		cur.Stage = h.to.Path
		cur.EntryPending = pendingOn(h)
		policy.ApplyOutputs(cur, h.outputs)
		switch {
		case h.failure != nil:
			policy.Count(cur, h.failure, t.d.Config, from)
		case h.kind == stages.MoveStepBack:
			// Sent back on purpose, not for a failure: no failure's
			// details follow it.
			policy.ApplyOutputs(cur, map[string]string{notice.OutClass: "", notice.OutFeedback: ""})
		case h.kind == stages.MoveAdvance:
			policy.Passed(cur, h.from)
		}
		cur.History = append(cur.History, issues.HistoryEntry{From: from, To: h.to.Path, Kind: h.kind, Actor: string(t.actor.Kind), Request: t.actor.Request,
			Reason: h.reason, At: time.Now().UTC().Truncate(time.Second)})
		return nil
	})
}

// save writes outputs and change in one update of iss. A failure is
// returned as a warning: the move it follows stands.
func (t *Transition) save(iss *issues.Issue, outputs map[string]string, change func(*issues.Issue)) (*issues.Issue, []string) {
	if !policy.Changes(iss, outputs) && change == nil {
		return iss, nil // a poll that learned nothing new writes nothing
	}
	updated, err := t.tx.Update(iss.Version, func(i *issues.Issue) error {
		policy.ApplyOutputs(i, outputs)
		if change != nil {
			change(i)
		}
		return nil
	})
	if err != nil {
		return iss, []string{"could not save hook outputs: " + err.Error()}
	}
	return updated, nil
}

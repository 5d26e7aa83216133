package record

import (
	"time"

	"gopkg.in/yaml.v3"
)

// WatchFile is an issue's watch.yaml: what polling hooks remember (Hooks),
// and the controller's polling state of the PR (Poll). Neither is
// part of the version: they change on every poll.
type WatchFile struct {
	Hooks map[string]string `yaml:"hooks,omitempty"`
	Poll  *Poll             `yaml:"poll,omitempty"`
}

// Poll is how the controller watches one PR (docs/ARCHITECTURE.md §6): bound to the
// head it last saw, at an interval that adapts, remembering what it has
// already told the agent, so a restarted controller repeats nothing.
type Poll struct {
	PR int `yaml:"pr"`
	// Stage is where the issue was at the last look: an issue that moved
	// since is looked at again at once, from the first interval.
	Stage string `yaml:"stage,omitempty"`
	Head  string `yaml:"head"`
	// PushedAt is when the controller first saw Head.
	PushedAt  time.Time `yaml:"pushed_at"`
	Started   time.Time `yaml:"started"`
	Iteration int       `yaml:"iteration"`
	// IntervalS is the current interval in seconds; NextAt the next poll.
	IntervalS int       `yaml:"interval_s"`
	NextAt    time.Time `yaml:"next_at"`
	// Handled are the review comments and threads already forwarded.
	Handled []string `yaml:"handled,omitempty"`
	// FeedbackMark is the forge's mark of the PR's review activity when it
	// was last read: the feedback is read again only when it changes.
	FeedbackMark string `yaml:"feedback_mark,omitempty"`
	// ReviewMark is the forge's mark of the PR's review activity at the
	// last poll, whatever was forwarded: a new comment, review or thread
	// is an event for the interval at every stage.
	ReviewMark string `yaml:"review_mark,omitempty"`
	// Noted are the review comments and threads counted as new at a stage
	// that forwards nothing (a controller stage): counted once each.
	Noted []string `yaml:"noted,omitempty"`
	// PolledAt is when the controller last polled the PR: a resume after
	// it is looked at at once, from the first interval.
	PolledAt time.Time `yaml:"polled_at,omitempty"`
	// FixAttempts counts the step backs per failing check.
	FixAttempts map[string]int `yaml:"fix_attempts,omitempty"`
	// ForgeErrors counts consecutive errors talking to the forge, since
	// the history had ErrorsSince entries (a resume restarts it).
	ForgeErrors int `yaml:"forge_errors,omitempty"`
	ErrorsSince int `yaml:"errors_since,omitempty"`
	// Failing is the set of failing checks last seen (an event when it changes).
	Failing []string `yaml:"failing,omitempty"`
	// Checks counts the CI checks on Head as last seen, when the forge
	// reported them with the PR.
	Checks  *Checks  `yaml:"checks,omitempty"`
	Status  string   `yaml:"status,omitempty"`
	Actions []Action `yaml:"actions,omitempty"`
}

// Action is one line of the controller's log of what it did to an issue.
type Action struct {
	At   time.Time `yaml:"at"`
	What string    `yaml:"what"`
}

// MaxActions bounds the actions log kept in watch.yaml.
const MaxActions = 50

// Log adds an action, keeping the last MaxActions.
func (p *Poll) Log(at time.Time, what string) {
	p.Actions = append(p.Actions, Action{At: at.UTC().Truncate(time.Second), What: what})
	if n := len(p.Actions); n > MaxActions {
		p.Actions = append([]Action(nil), p.Actions[n-MaxActions:]...)
	}
}

// Checks counts CI checks by state.
type Checks struct {
	Total   int `yaml:"total" json:"total"`
	Pending int `yaml:"pending" json:"pending"`
	// Queued counts the pending checks that wait to start.
	Queued  int `yaml:"queued,omitempty" json:"queued,omitempty"`
	Passing int `yaml:"passing" json:"passing"`
	Failing int `yaml:"failing" json:"failing"`
}

// ParseWatch parses watch.yaml's bytes (see DecodeWatch).
func ParseWatch(data []byte) (*WatchFile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	return DecodeWatch(&doc)
}

// DecodeWatch decodes watch.yaml as parsed into doc. The first layout, a
// flat map of the hooks' keys, is read as the hooks' part.
func DecodeWatch(doc *yaml.Node) (*WatchFile, error) {
	w := &WatchFile{}
	var err error
	if len(doc.Content) > 0 && isWatchLayout(doc.Content[0]) {
		err = doc.Decode(w)
	} else if len(doc.Content) > 0 {
		err = doc.Decode(&w.Hooks)
	}
	if err != nil {
		return nil, err
	}
	if w.Hooks == nil {
		w.Hooks = map[string]string{}
	}
	return w, nil
}

// isWatchLayout reports whether a watch.yaml mapping is the current
// layout (hooks:, poll:) rather than the first one, a flat map of the
// hooks' keys.
func isWatchLayout(m *yaml.Node) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i].Value; k == "hooks" || k == "poll" {
			return true
		}
	}
	return false
}

package nodes

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// readWait bounds a tick's reads of the nodes: a cluster out of reach
// must not hold the tick.
const readWait = 5 * time.Second

// Share is how a controller or a node learns, at each tick, which
// issues' agents are its own to keep and carry messages to.
type Share struct {
	Registry Registry
	// Self is this process's node; "" for a controller that runs no
	// agents.
	Self string
	// Places: this is the elected controller, which gives each unfinished
	// issue without a node one (Place).
	Places bool
	Log    *slog.Logger

	mu sync.Mutex
	// gone is what was last said of each node gone, to say it once.
	gone map[string]string
}

// Here reads the issues' nodes, gives those without one a node when s
// Places, and says which issues are this process's. When the nodes
// cannot be read (the cluster out of reach), none is: a node that does
// not know its issues starts no agent and types into no pane. known
// gives the issues of ids as the tick read them.
func (s *Share) Here(ctx context.Context, e *engine.Engine, known func(ids []int) []*issues.Issue) func(id int) bool {
	none := func(int) bool { return false }
	rctx, cancel := context.WithTimeout(ctx, readWait)
	defer cancel()
	assigned, err := s.Registry.Assigned(rctx)
	if err != nil {
		s.Log.Warn("the issues' nodes cannot be read; no agent is looked after until they are", "err", err)
		return none
	}
	if s.Places {
		s.place(rctx, e, known, assigned)
	}
	self := s.Self
	if self == "" {
		return none
	}
	return func(id int) bool { return assigned[id] == self }
}

// place gives the unfinished issues without a node one, and says in the
// log which nodes are gone with issues of theirs unfinished.
func (s *Share) place(ctx context.Context, e *engine.Engine, known func(ids []int) []*issues.Issue, assigned map[int]string) {
	live, err := s.Registry.Live(ctx)
	if err != nil {
		s.Log.Warn("the nodes cannot be read; no issue is given one", "err", err)
		return
	}
	ids, err := e.Store.IDs()
	if err != nil {
		s.Log.Warn("listing issues", "err", err)
		return
	}
	var unfinished []int
	labels := map[int][]string{}
	for _, iss := range known(ids) {
		if iss != nil && !finished(e.Config, iss) {
			unfinished = append(unfinished, iss.ID)
			labels[iss.ID] = iss.Labels
		}
	}
	survey := Look(unfinished, live, assigned)
	load := map[string]int{}
	for node, ids := range survey.Load {
		load[node] = len(ids)
	}
	wants := make([]Want, len(survey.Waiting))
	for i, id := range survey.Waiting {
		wants[i] = Want{ID: id, Labels: labels[id]}
	}
	for id, node := range Place(wants, live, load) {
		if err := s.Registry.Assign(ctx, id, node, ""); err != nil {
			s.Log.Warn("giving an issue a node", "issue", id, "node", node, "err", err)
			continue
		}
		assigned[id] = node
		s.Log.Info("issue given to a node", "issue", id, "node", node)
	}
	s.sayGone(survey)
}

// sayGone logs each gone node's unfinished issues once while they stay
// the same.
func (s *Share) sayGone(survey Survey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := map[string]string{}
	for _, node := range survey.Gone {
		now[node] = JoinIDs(survey.Load[node])
		if s.gone[node] != now[node] {
			s.Log.Warn("a node is gone with issues of its own unfinished: a person moves them with `agenttree assign ID --node NAME`", "node", node, "issues", now[node])
		}
	}
	s.gone = now
}

// finished reports whether iss is at a stage that ends it: its node
// keeps nothing running for it.
func finished(cfg *stages.Config, iss *issues.Issue) bool {
	n, ok := cfg.Node(iss.Stage)
	return ok && n.Terminal() != stages.TerminalNone
}

package nodes

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
)

// readWait bounds each of a tick's requests to the nodes' keys: a cluster
// out of reach must not hold the tick.
const readWait = 5 * time.Second

// ErrNotJoined is a node whose lease ended and that has not joined again:
// it does not know that its issues are still its own.
var ErrNotJoined = errors.New("this node is not among the nodes alive (its lease ended)")

// Share is how a controller or a node learns, at each tick, which
// issues' agents are its own to keep and carry messages to.
type Share struct {
	Registry Registry
	// Self is this process's node; "" for a controller that runs no
	// agents.
	Self string
	// Places: this is the elected controller, which gives each issue
	// that reaches an agent's stage without a node one (Place).
	Places bool
	// Joined, when set, says whether this node is among the nodes alive
	// now.
	Joined func() bool
	Log    *slog.Logger

	mu sync.Mutex
	// gone is what was last said of each node gone, to say it once.
	gone map[string]string
}

// Homes reads the issues' nodes, gives those that need one a node when s
// Places, and says where each issue's agent is. When that cannot be told
// (the cluster out of reach, this node's lease ended) it is an error, and
// the caller neither starts nor stops an agent until it can. known gives
// the issues of ids as the tick read them.
func (s *Share) Homes(ctx context.Context, e *engine.Engine, known func(ids []int) []*issues.Issue) (Homes, error) {
	if s.Joined != nil && !s.Joined() {
		return Homes{}, ErrNotJoined
	}
	rctx, cancel := context.WithTimeout(ctx, readWait)
	assigned, err := s.Registry.Assigned(rctx)
	cancel()
	if err != nil {
		return Homes{}, err
	}
	if s.Places {
		s.place(ctx, e, known, assigned)
	}
	return Homes{Self: s.Self, Assigned: assigned}, nil
}

// place gives each issue at an agent's stage without a node one, and
// says in the log which nodes are gone with issues of theirs unfinished.
func (s *Share) place(ctx context.Context, e *engine.Engine, known func(ids []int) []*issues.Issue, assigned map[int]string) {
	rctx, cancel := context.WithTimeout(ctx, readWait)
	live, err := s.Registry.Live(rctx)
	cancel()
	if err != nil {
		s.Log.Warn("the nodes cannot be read; no issue is given one", "err", err)
		return
	}
	ids, err := e.Store.IDs()
	if err != nil {
		s.Log.Warn("listing issues", "err", err)
		return
	}
	var open []Open
	labels := map[int][]string{}
	for i, iss := range known(ids) {
		if iss == nil {
			// Not read this tick: its node's room stays taken.
			open = append(open, Open{ID: ids[i]})
			continue
		}
		if !Finished(e.Config, iss.Stage) {
			open = append(open, Open{ID: iss.ID, Labels: iss.Labels, WantsNode: WantsNode(e.Config, iss.Stage, iss.Escalated != nil)})
			labels[iss.ID] = iss.Labels
		}
	}
	survey := Look(open, live, assigned)
	load := map[string]int{}
	for node, ids := range survey.Load {
		load[node] = len(ids)
	}
	wants := make([]Want, len(survey.Waiting))
	for i, id := range survey.Waiting {
		wants[i] = Want{ID: id, Labels: labels[id]}
	}
	for id, node := range Place(wants, live, load) {
		actx, cancel := context.WithTimeout(ctx, readWait)
		err := s.Registry.Assign(actx, id, node, "")
		cancel()
		if err != nil {
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

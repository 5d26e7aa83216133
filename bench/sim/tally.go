//go:build etcd

package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
)

// move is one transition: from a stage to another, by an actor (agent,
// human, controller), as the history of issue.yaml records it.
type move struct{ from, to, who string }

// tally is what the actors did, as they saw it: every move whose result
// came back to them, every issue created. finish compares it with what
// the issues' logs hold.
type tally struct {
	mu       sync.Mutex
	moves    map[int]map[move]int
	creates  map[int]int
	nCreated int
	retries  int
	// refusals count the moves asked and not made, by why.
	refusals map[string]int
}

func newTally() *tally {
	return &tally{moves: map[int]map[move]int{}, creates: map[int]int{}, refusals: map[string]int{}}
}

func (t *tally) move(id int, from, to, who string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.moves[id] == nil {
		t.moves[id] = map[move]int{}
	}
	t.moves[id][move{from, to, who}]++
}

func (t *tally) create(id int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.creates[id]++
	t.nCreated++
}

func (t *tally) created() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nCreated
}

func (t *tally) retry() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.retries++
}

func (t *tally) refused(id int, what string, r *engine.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refusals[fmt.Sprintf("%s: %s", what, r.Status)]++
}

// verdict is the comparison of the tally with the logs.
type verdict struct {
	issues, broken       int
	made, logged         int
	lost, doubled        int
	createsMade, logged0 int
	// examples are a few issues that differ, for a person to look at.
	examples []string
}

// compare reads every issue's log (Verify: every line's hash, link and
// state, issue.yaml against the last line) and its history, and counts
// the moves made that no log holds (lost) and those logged more often
// than made (doubled).
func (t *tally) compare(ctx context.Context, st *issues.Store) (verdict, error) {
	var v verdict
	ids, err := st.IDs()
	if err != nil {
		return v, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, made := range t.moves {
		for _, n := range made {
			v.made += n
		}
	}
	seen := map[int]bool{}
	for _, id := range ids {
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
		seen[id] = true
		v.issues++
		rep, err := st.Verify(id)
		if err != nil || !rep.OK {
			v.broken++
			v.note(fmt.Sprintf("issue %d does not verify: %v %v", id, err, problems(rep)))
			continue
		}
		iss, err := st.Get(id)
		if err != nil {
			return v, err
		}
		logged := map[move]int{}
		for _, h := range iss.History {
			switch {
			case h.Kind == issues.KindCreate:
				v.logged0++
			case h.From != h.To:
				logged[move{h.From, h.To, h.Actor}]++
				v.logged++
			}
		}
		v.createsMade += t.creates[id]
		if t.creates[id] != 1 {
			v.note(fmt.Sprintf("issue %d: created %d times by the people's tally", id, t.creates[id]))
		}
		v.diff(id, t.moves[id], logged)
	}
	for id, made := range t.moves {
		if !seen[id] {
			v.diff(id, made, nil)
		}
	}
	return v, nil
}

// diff counts issue id's moves made and not logged, and logged more
// often than made.
func (v *verdict) diff(id int, made, logged map[move]int) {
	keys := map[move]bool{}
	for m := range made {
		keys[m] = true
	}
	for m := range logged {
		keys[m] = true
	}
	for m := range keys {
		switch d := logged[m] - made[m]; {
		case d < 0:
			v.lost -= d
			v.note(fmt.Sprintf("issue %d: %s → %s by %s made %d times, logged %d", id, m.from, m.to, m.who, made[m], logged[m]))
		case d > 0:
			v.doubled += d
			v.note(fmt.Sprintf("issue %d: %s → %s by %s made %d times, logged %d", id, m.from, m.to, m.who, made[m], logged[m]))
		}
	}
}

func (v *verdict) note(s string) {
	if len(v.examples) < 10 {
		v.examples = append(v.examples, s)
	}
}

func problems(r *issues.Report) []string {
	if r == nil {
		return nil
	}
	return r.Problems
}

package issues

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/engine/issues/backend"
)

// missing says what issue id is, whose issue.yaml is gone: not found
// (or missing, its directory gone: see Store.notFound) when its log holds
// nothing; a Create cut short (in progress, or
// stopped by a crash) when its log holds a create line only, and then
// the issue that line holds, for load to finish; tampered otherwise.
func (s *Store) missing(id int) (*Issue, error) {
	r := s.events(id).Replay()
	switch {
	case r.Last == nil:
		return nil, s.notFound(id)
	case len(r.Events) == 1 && r.Events[0].Op == OpCreate && r.Problem == "":
		iss := r.Last
		iss.Chain = r.LastLine().Hash
		return iss, nil
	}
	return nil, &TamperedError{ID: id, Problem: fmt.Sprintf("its issue.yaml is missing (its events.jsonl holds version %d)", r.Last.Version)}
}

// load reads issue.yaml under the lock and checks its head: it finishes a
// write a crash interrupted, and refuses an issue changed outside
// agenttree.
func (t *Tx) load() (*Issue, error) {
	snap, err := t.s.b.Read(context.Background(), t.id)
	if err != nil {
		return nil, err
	}
	data := snap.State
	if data == nil {
		iss, err := t.s.missing(t.id)
		if err != nil {
			return nil, err
		}
		if data, err = t.write(iss); err != nil {
			return nil, fmt.Errorf("issue %d: finish its creation a crash interrupted: %w", t.id, err)
		}
		t.data, t.head = data, iss.Chain
		return iss, nil
	}
	iss, err := t.s.decode(t.id, data)
	if err != nil {
		return nil, err
	}
	h, err := t.s.events(t.id).CheckHead(iss)
	if err != nil {
		return nil, err
	}
	if h.Tail.Torn > 0 {
		if err := t.s.b.DropTorn(context.Background(), t.held, t.id, h.Tail); err != nil {
			return nil, err
		}
	}
	if h.Next != nil {
		iss = h.Next
		iss.Chain = h.Tail.Last.Hash
		if data, err = t.write(iss); err != nil {
			return nil, fmt.Errorf("issue %d: finish the write a crash interrupted: %w", t.id, err)
		}
	}
	t.data, t.head = data, iss.Chain
	return iss, nil
}

// write replaces issue.yaml with iss, and returns what it wrote.
func (t *Tx) write(iss *Issue) ([]byte, error) {
	data, err := yaml.Marshal(iss)
	if err != nil {
		return nil, fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	if _, err := t.s.b.Commit(context.Background(), t.held, backend.Write{ID: iss.ID, State: data}); err != nil {
		return data, err
	}
	return data, nil
}

// startChain starts a new log from iss as it is, the old log's lines set
// aside in the file aside; it returns issue.yaml's new content and how
// many lines it set aside.
func (t *Tx) startChain(iss *Issue, op Op, aside string) ([]byte, int, error) {
	n, err := t.s.b.SetAside(context.Background(), t.held, t.id, 1, aside)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("issue %d: %w", t.id, err)
	}
	data, err := t.commit("", iss, op, iss.History, nil)
	return data, n, err
}

// decode parses issue id's issue.yaml content.
func (s *Store) decode(id int, data []byte) (*Issue, error) {
	if iss, ok := s.shared.Take(id, data); ok {
		return iss, nil
	}
	var iss Issue
	if err := yaml.Unmarshal(data, &iss); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path(id), err)
	}
	return &iss, nil
}

// checked is iss, read without the lock from issue id's issue.yaml,
// checked as Lock checks it, and as its log holds it: iss itself, or the
// issue of a write logged but not in issue.yaml yet (in progress, or cut
// short by a crash and finished by the next Lock), which is the issue's
// state. It changes nothing.
func (s *Store) checked(id int, iss *Issue) (*Issue, error) {
	for try := 1; ; try++ {
		h, err := s.events(id).CheckHead(iss)
		var te *TamperedError
		switch {
		case err == nil && h.Next != nil:
			h.Next.Chain = h.Tail.Last.Hash
			return h.Next, nil
		case err == nil:
			return iss, nil
		case !errors.As(err, &te) || try == 3:
			return nil, err
		}
		// Without the lock, two writes made between the reads of
		// issue.yaml and of the log look like a mismatch: read again.
		fresh, rerr := s.read(id)
		if rerr != nil || fresh.Chain == iss.Chain {
			return nil, err
		}
		iss = fresh
	}
}

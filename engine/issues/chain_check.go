package issues

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/chain"
)

// TamperedError says an issue on disk is not what agenttree last wrote:
// its issue.yaml or its events.jsonl was changed outside agenttree.
// Nothing acts on the issue until a person repairs it.
type TamperedError struct {
	ID int
	// Problem says what does not match.
	Problem string
	// Changes are how issue.yaml differs from the last state the log
	// holds, field by field ("stage: implement.code → accepted"), when
	// that state is known.
	Changes []string
}

// maxChangesShown bounds the changes an error message lists.
const maxChangesShown = 6

func (e *TamperedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "issue %d was changed outside agenttree: %s", e.ID, e.Problem)
	if n := len(e.Changes); n > 0 {
		shown := e.Changes[:min(n, maxChangesShown)]
		fmt.Fprintf(&b, " (%s", strings.Join(shown, "; "))
		if n > len(shown) {
			fmt.Fprintf(&b, "; %d more", n-len(shown))
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; agenttree will not act on it. See what changed with `agenttree verify %d`; "+
		"a person restores its last consistent state with `agenttree repair %d`", e.ID, e.ID)
	return b.String()
}

// headState is what the end of an issue's log says of its issue.yaml.
type headState int

const (
	// The zero value: issue.yaml is the state the log's last line holds.
	_ headState = iota
	// headInterrupted: the last line was logged, but a crash stopped
	// the write of issue.yaml that follows it.
	headInterrupted
)

// head is what checkHead found.
type head struct {
	state headState
	tail  chain.Tail
	// next is, for headInterrupted, the issue the last line holds.
	next *Issue
}

// checkHead compares iss, as issue id's issue.yaml holds it, with the
// last line of its log, read from the end of the file: its cost does not
// grow with the log. A mismatch is a *TamperedError.
func (s *Store) checkHead(id int, iss *Issue) (head, error) {
	if iss.ID != id {
		return head{}, &TamperedError{ID: id, Problem: fmt.Sprintf("its issue.yaml says it is issue %d", iss.ID)}
	}
	tail, err := s.events(id).Tail()
	var ce *chain.Error
	switch {
	case errors.Is(err, fs.ErrNotExist), err == nil && tail.Empty():
		if iss.Chain == "" {
			return head{tail: tail}, s.tampered(iss, "it has no chain and no events.jsonl, so whether it was changed cannot be told")
		}
		return head{tail: tail}, s.tampered(iss, "its events.jsonl is missing or empty")
	case errors.As(err, &ce):
		if iss.Chain == "" && errors.Is(ce, chain.ErrFormat) {
			return head{tail: tail}, s.tampered(iss, problemPreChain)
		}
		return head{tail: tail}, s.tampered(iss, fmt.Sprintf("the last line of its events.jsonl: %v", ce.Err))
	case err != nil:
		return head{}, fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	h := head{tail: tail}
	notOurs := func() error {
		return s.tampered(iss, "the last line of its events.jsonl is not an event of this issue")
	}
	switch iss.Chain {
	case tail.Last.Hash:
		// The usual case, on every read: decode no more than needed.
		var last struct {
			Issue     int    `json:"issue"`
			StateHash string `json:"state_hash"`
		}
		if err := tail.Last.Decode(&last); err != nil || last.Issue != iss.ID {
			return h, notOurs()
		}
		if sum, err := stateHash(iss); err != nil || sum != last.StateHash {
			return h, s.tampered(iss, "issue.yaml differs from the last state its events.jsonl holds")
		}
		return h, nil
	case tail.Last.Prev:
		var last Event
		if err := tail.Last.Decode(&last); err != nil || last.State == nil || last.Issue != iss.ID {
			return h, notOurs()
		}
		next := last.after(iss.History)
		if sum, err := stateHash(next); err == nil && sum == last.StateHash {
			h.state, h.next = headInterrupted, next
			return h, nil
		}
	}
	if iss.Chain == "" {
		return h, s.tampered(iss, "issue.yaml has no chain (its chain field was removed)")
	}
	return h, s.tampered(iss, "issue.yaml's chain does not name the last line of its events.jsonl (lines were cut off the log, or issue.yaml was replaced)")
}

// problemPreChain is an issue made to look like one from before chains,
// which only a migration from the first layout has, and adopts.
const problemPreChain = "it has no chain and its events.jsonl is not a hash chain, as if it came from before chains " +
	"(those got their chains when their state directory was migrated)"

// after is the issue ev logged, from the history before it.
func (ev *Event) after(history []HistoryEntry) *Issue {
	next := *ev.State
	if ev.Op.startsChain() {
		next.History = slices.Clone(ev.Entries)
	} else {
		next.History = append(slices.Clone(history), ev.Entries...)
	}
	return &next
}

// tampered is the error for iss, with how it differs from the last state
// its log holds when that can be worked out.
func (s *Store) tampered(iss *Issue, problem string) *TamperedError {
	te := &TamperedError{ID: iss.ID, Problem: problem}
	if r := s.replay(iss.ID); r.last != nil {
		te.Changes = diff(r.last, iss)
	}
	return te
}

// missing says what issue id is, whose issue.yaml is gone: not found
// (or missing, its directory gone: see Store.notFound) when its log holds
// nothing; a Create cut short (in progress, or
// stopped by a crash) when its log holds a create line only, and then
// the issue that line holds, for load to finish; tampered otherwise.
func (s *Store) missing(id int) (*Issue, error) {
	r := s.replay(id)
	switch {
	case r.last == nil:
		return nil, s.notFound(id)
	case len(r.events) == 1 && r.events[0].Op == OpCreate && r.problem == "":
		iss := r.last
		iss.Chain = r.lastLine().Hash
		return iss, nil
	}
	return nil, &TamperedError{ID: id, Problem: fmt.Sprintf("its issue.yaml is missing (its events.jsonl holds version %d)", r.last.Version)}
}

// load reads issue.yaml under the lock and checks its head: it finishes a
// write a crash interrupted, and refuses an issue changed outside
// agenttree.
func (t *Tx) load() (*Issue, error) {
	path := t.s.path(t.id)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		iss, err := t.s.missing(t.id)
		if err != nil {
			return nil, err
		}
		if data, err = t.s.write(iss); err != nil {
			return nil, fmt.Errorf("issue %d: finish its creation a crash interrupted: %w", t.id, err)
		}
		t.data, t.head = data, iss.Chain
		return iss, nil
	}
	if err != nil {
		return nil, err
	}
	iss, err := decode(path, data)
	if err != nil {
		return nil, err
	}
	h, err := t.s.checkHead(t.id, iss)
	if err != nil {
		return nil, err
	}
	if h.tail.Torn > 0 {
		if err := t.s.events(t.id).DropTorn(h.tail); err != nil {
			return nil, err
		}
	}
	if h.state == headInterrupted {
		iss = h.next
		iss.Chain = h.tail.Last.Hash
		if data, err = t.s.write(iss); err != nil {
			return nil, fmt.Errorf("issue %d: finish the write a crash interrupted: %w", t.id, err)
		}
	}
	t.data, t.head = data, iss.Chain
	return iss, nil
}

// startChain starts a new log from iss as it is, the old log's lines set
// aside in the file aside; it returns issue.yaml's new content and how
// many lines it set aside.
func (t *Tx) startChain(iss *Issue, op Op, aside string) ([]byte, int, error) {
	n, err := t.s.events(t.id).SetAside(0, filepath.Join(t.s.HostDir(t.id), aside))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("issue %d: %w", t.id, err)
	}
	data, err := t.s.commit("", iss, op, iss.History, nil)
	return data, n, err
}

// decode parses issue.yaml's content.
func decode(path string, data []byte) (*Issue, error) {
	var iss Issue
	if err := yaml.Unmarshal(data, &iss); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
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
		h, err := s.checkHead(id, iss)
		var te *TamperedError
		switch {
		case err == nil && h.state == headInterrupted:
			h.next.Chain = h.tail.Last.Hash
			return h.next, nil
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

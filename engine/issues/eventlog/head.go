package eventlog

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/record"
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

// Head is what CheckHead found at the end of the log.
type Head struct {
	Tail chain.Tail
	// Next is set when the last line was logged but a crash stopped the
	// write of issue.yaml that follows it: it is the issue that line
	// holds, which issue.yaml is to be.
	Next *record.Issue
}

// CheckHead compares iss, as the issue's issue.yaml holds it, with the
// last line of its log, read from the end of the file: its cost does not
// grow with the log. A mismatch is a *TamperedError.
func (l Log) CheckHead(iss *record.Issue) (Head, error) {
	if iss.ID != l.ID {
		return Head{}, &TamperedError{ID: l.ID, Problem: fmt.Sprintf("its issue.yaml says it is issue %d", iss.ID)}
	}
	tail, err := l.Tail()
	var ce *chain.Error
	switch {
	case errors.Is(err, fs.ErrNotExist), err == nil && tail.Empty():
		if iss.Chain == "" {
			return Head{Tail: tail}, l.tampered(iss, "it has no chain and no events.jsonl, so whether it was changed cannot be told")
		}
		return Head{Tail: tail}, l.tampered(iss, "its events.jsonl is missing or empty")
	case errors.As(err, &ce):
		if iss.Chain == "" && errors.Is(ce, chain.ErrFormat) {
			return Head{Tail: tail}, l.tampered(iss, problemPreChain)
		}
		return Head{Tail: tail}, l.tampered(iss, fmt.Sprintf("the last line of its events.jsonl: %v", ce.Err))
	case err != nil:
		return Head{}, fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	h := Head{Tail: tail}
	notOurs := func() error {
		return l.tampered(iss, "the last line of its events.jsonl is not an event of this issue")
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
			return h, l.tampered(iss, "issue.yaml differs from the last state its events.jsonl holds")
		}
		return h, nil
	case tail.Last.Prev:
		var last Event
		if err := tail.Last.Decode(&last); err != nil || last.State == nil || last.Issue != iss.ID {
			return h, notOurs()
		}
		next := last.after(iss.History)
		if sum, err := stateHash(next); err == nil && sum == last.StateHash {
			h.Next = next
			return h, nil
		}
	}
	if iss.Chain == "" {
		return h, l.tampered(iss, "issue.yaml has no chain (its chain field was removed)")
	}
	return h, l.tampered(iss, "issue.yaml's chain does not name the last line of its events.jsonl (lines were cut off the log, or issue.yaml was replaced)")
}

// problemPreChain is an issue made to look like one from before chains,
// which only a migration from the first layout has, and adopts.
const problemPreChain = "it has no chain and its events.jsonl is not a hash chain, as if it came from before chains " +
	"(those got their chains when their state directory was migrated)"

// tampered is the error for iss, with how it differs from the last state
// its log holds when that can be worked out.
func (l Log) tampered(iss *record.Issue, problem string) *TamperedError {
	te := &TamperedError{ID: iss.ID, Problem: problem}
	if r := l.Replay(); r.Last != nil {
		te.Changes = Diff(r.Last, iss)
	}
	return te
}

// Package transfer moves a state directory's issues from one store
// backend to another, whole (`agenttree migrate`, docs/ARCHITECTURE.md
// §8): every issue's state, log, watch.yaml and records set aside, its
// outbox's messages where the two keep them apart (files and etcd), and
// the last id given, then checks the destination as `agenttree verify`
// does.
//
// The source is only read: each issue under its lock, so that no write
// is copied half made, and never changed or removed. The destination is
// written issue by issue, each one replaced whole (backend.Porter's
// Import), so a transfer stopped halfway is run again to the end: an
// issue already there as the source holds it is left alone, one whose
// log is the start of the source's (an earlier transfer, or one cut
// short) is brought up to it. An issue the destination holds otherwise
// (its log not the start of the source's, or one the source does not
// have) stops the transfer before anything is written: it is state
// someone made there, which a transfer never overwrites.
package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/backend"
)

// Options are a transfer's ends.
type Options struct {
	// From and To are the backends; Root is the state directory both
	// belong to (the stage documents, the layout, and the outboxes of a
	// backend that does not keep them, outbox.Keeper).
	From, To backend.Porter
	Root     string
	// LockTimeout bounds each wait for an issue's lock (30s when zero).
	LockTimeout time.Duration
}

// Action is what a transfer did with one issue.
type Action string

const (
	// Copied: the destination did not hold the issue.
	Copied Action = "copied"
	// CaughtUp: the destination held the start of its log.
	CaughtUp Action = "caught up"
	// Same: the destination held it as the source does.
	Same Action = "same"
)

// Moved is one issue transferred.
type Moved struct {
	ID     int    `json:"id"`
	Action Action `json:"action"`
	// Lines are the lines of its log; Hash its last line's hash, the
	// chain's head, the same at both ends.
	Lines int    `json:"lines"`
	Hash  string `json:"hash,omitempty"`
	// Messages are the messages of its outbox copied: those the
	// destination did not hold.
	Messages int `json:"messages,omitempty"`
}

// Result is what a transfer did, and what the destination's check found.
type Result struct {
	Issues []Moved `json:"issues"`
	LastID int     `json:"last_id"`
	// Verified are the destination's reports, as `agenttree verify`
	// makes them; OK when every one is.
	Verified []*issues.Report `json:"verified"`
	OK       bool             `json:"ok"`
}

// ConflictError is a destination holding issues that are not the
// source's: nothing was written.
type ConflictError struct {
	// Why are the issues, each with what is wrong with it.
	Why map[int]string
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the destination already holds %d issue(s) that are not copies of the source's:", len(e.Why))
	for _, id := range slices.Sorted(maps.Keys(e.Why)) {
		fmt.Fprintf(&b, "\n  issue %d: %s", id, e.Why[id])
	}
	return b.String()
}

// Run transfers every issue of o.From to o.To, then checks o.To. It stops
// at ctx's end between issues, each one written whole or not at all (run
// it again: it goes on where it stopped).
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.LockTimeout <= 0 {
		o.LockTimeout = 30 * time.Second
	}
	ids, err := o.From.IDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the source's issues: %w", err)
	}
	if err := conflicts(ctx, o, ids); err != nil {
		return nil, err
	}
	res := &Result{}
	done := map[int]bool{}
	// Issues created meanwhile are taken by the next round; a round that
	// finds none new ends.
	for round := 0; round < 3 && len(ids) > 0; round++ {
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("stopped after %d issue(s): %w; run it again to go on", len(res.Issues), err)
			}
			m, ok, err := one(ctx, o, id)
			if err != nil {
				return nil, err
			}
			done[id] = true
			if ok {
				res.Issues = append(res.Issues, m)
			}
		}
		all, err := o.From.IDs(ctx)
		if err != nil {
			return nil, err
		}
		ids = slices.DeleteFunc(all, func(id int) bool { return done[id] })
	}
	if res.LastID, err = o.From.LastID(ctx); err != nil {
		return nil, err
	}
	if n := len(res.Issues); n > 0 {
		res.LastID = max(res.LastID, res.Issues[n-1].ID)
	}
	if err := o.To.KeepLastID(ctx, res.LastID); err != nil {
		return nil, err
	}
	return res, verify(o, res)
}

// conflicts checks, before anything is written, that every issue the
// destination holds is the start of the source's same issue.
func conflicts(ctx context.Context, o Options, ids []int) error {
	there, err := o.To.IDs(ctx)
	if err != nil {
		return fmt.Errorf("list the destination's issues: %w", err)
	}
	why := map[int]string{}
	for _, id := range there {
		dst, err := o.To.Export(ctx, id)
		if err != nil {
			return err
		}
		if empty(dst) {
			continue
		}
		if !slices.Contains(ids, id) {
			why[id] = "the source has no such issue: it was made at the destination"
			continue
		}
		src, err := o.From.Export(ctx, id)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(src.Log, dst.Log) {
			why[id] = "its log is not the start of the source's: it was changed at the destination"
		}
	}
	if len(why) > 0 {
		return &ConflictError{Why: why}
	}
	return nil
}

// empty is an issue with neither state nor log: a directory kept for its
// outbox, or nothing.
func empty(w backend.Whole) bool { return w.State == nil && w.Log == nil }

// one transfers issue id under its lock at the source; ok is false for an
// issue with nothing stored.
func one(ctx context.Context, o Options, id int) (Moved, bool, error) {
	h, err := o.From.Lock(ctx, id, o.LockTimeout)
	if errors.Is(err, backend.ErrNotStored) {
		return Moved{}, false, nil
	}
	if err != nil {
		return Moved{}, false, fmt.Errorf("issue %d: %w", id, err)
	}
	defer h.Unlock()
	src, err := o.From.Export(ctx, id)
	if err != nil || empty(src) {
		return Moved{}, false, err
	}
	m := Moved{ID: id, Action: Copied}
	m.Lines, m.Hash = head(src.Log)
	dst, err := o.To.Export(ctx, id)
	if err != nil {
		return m, false, err
	}
	switch {
	case same(src, dst):
		m.Action = Same
		m.Messages, err = copyOutbox(ctx, o, id)
		return m, err == nil, err
	case empty(dst):
	case bytes.HasPrefix(src.Log, dst.Log):
		m.Action = CaughtUp
	default:
		return m, false, &ConflictError{Why: map[int]string{id: "its log is not the start of the source's: it was changed at the destination while this ran"}}
	}
	if err := o.To.Import(ctx, src, o.LockTimeout); err != nil {
		return m, false, err
	}
	m.Messages, err = copyOutbox(ctx, o, id)
	return m, err == nil, err
}

// same is whether a and b hold the same bytes.
func same(a, b backend.Whole) bool {
	return bytes.Equal(a.State, b.State) && (a.State == nil) == (b.State == nil) &&
		bytes.Equal(a.Log, b.Log) && (a.Log == nil) == (b.Log == nil) &&
		bytes.Equal(a.Watch, b.Watch) && (a.Watch == nil) == (b.Watch == nil) &&
		maps.EqualFunc(a.Aside, b.Aside, bytes.Equal)
}

// head counts log's complete lines and reads the last one's hash, the
// chain's head ("" when it is not a line of a chain).
func head(log []byte) (int, string) {
	n, last := 0, []byte(nil)
	for _, l := range bytes.SplitAfter(log, []byte("\n")) {
		if bytes.HasSuffix(l, []byte("\n")) {
			n++
			last = l
		}
	}
	line, err := chain.Parse(bytes.TrimSuffix(last, []byte("\n")))
	if err != nil {
		return n, ""
	}
	return n, line.Hash
}

// verify checks every issue at the destination as `agenttree verify`
// does, through the store on it.
func verify(o Options, res *Result) error {
	st, err := issues.OpenWith(o.Root, o.To)
	if err != nil {
		return err
	}
	res.OK = true
	for _, m := range res.Issues {
		rep, err := st.Verify(m.ID)
		if err != nil {
			return fmt.Errorf("check issue %d at the destination: %w", m.ID, err)
		}
		res.Verified = append(res.Verified, rep)
		res.OK = res.OK && rep.OK
	}
	return nil
}

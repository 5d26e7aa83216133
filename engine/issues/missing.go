package issues

import (
	"context"
	"errors"
	"fmt"
)

// maxMissing bounds the ids Missing lists: a counter far past the last
// issue (an edited .last-id) shows as its first ones, not as a list
// without end.
const maxMissing = 1000

// Missing lists the issues whose directory is gone (see MissingError), in
// id order: the ids up to the last one Create gave that have no
// directory. present are ids known to have one, in order (IDs, or the ids
// Scan listed), which are not looked at again. At most maxMissing are
// listed.
func (s *Store) Missing(present []int) ([]int, error) {
	last := s.lastID()
	if n := len(present); n > 0 {
		last = max(last, present[n-1])
	}
	var out []int
	j := 0
	for id := 1; id <= last && len(out) < maxMissing; id++ {
		for j < len(present) && present[j] < id {
			j++
		}
		if j < len(present) && present[j] == id {
			continue
		}
		switch gone, err := s.gone(id); {
		case err != nil:
			return nil, err
		case gone:
			out = append(out, id)
		}
	}
	return out, nil
}

// gone reports whether nothing is stored for issue id: for files, that
// its directory is not there.
func (s *Store) gone(id int) (bool, error) { return s.b.Gone(context.Background(), id) }

// notFound is the error for issue id, which has neither issue.yaml nor a
// log: a *MissingError when Create gave its id and its directory is gone
// (an id at most the last one given, or below one whose directory is
// there); not found otherwise (an id not given yet, or one being
// created).
func (s *Store) notFound(id int) error {
	if gone, err := s.gone(id); err != nil || !gone {
		return notFound(id)
	}
	if id <= s.lastID() {
		return &MissingError{ID: id, Dir: s.HostDir(id)}
	}
	ids, err := s.ids()
	if err == nil && len(ids) > 0 && ids[len(ids)-1] > id {
		return &MissingError{ID: id, Dir: s.HostDir(id)}
	}
	return notFound(id)
}

func notFound(id int) error {
	return fmt.Errorf("issue %d: %w (list issues with `agenttree issue list`)", id, ErrNotFound)
}

// verifyMissing is Verify's report of issue id when its directory is gone:
// a *MissingError's, or not found.
func (s *Store) verifyMissing(id int) (*Report, error) {
	err := s.notFound(id)
	var me *MissingError
	if !errors.As(err, &me) {
		return nil, err
	}
	return MissingReport(me), nil
}

// MissingReport is Verify's report of the issue me says is missing.
func MissingReport(me *MissingError) *Report {
	return &Report{ID: me.ID, Missing: true, Problems: []string{me.Problem()}}
}

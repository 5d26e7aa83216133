package issues

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/agenttree/agenttree/internal/statedir"
)

// migrate runs the state directory's migration from the first layout
// (statedir.Layout.Migrate), keeping what it left alone for the command
// to show (Warnings), and reports whether the state from before chains
// is to be adopted.
func (s *Store) migrate(ctx context.Context) (bool, error) {
	m, err := s.layout.Migrate(ctx)
	s.warn(m.Warnings()...)
	return m.Adopt, err
}

func (s *Store) warn(w ...string) {
	if len(w) == 0 {
		return
	}
	s.warnMu.Lock()
	defer s.warnMu.Unlock()
	s.warnings = append(s.warnings, w...)
}

// Warnings are what people should know of opening the store (or of a
// Create that set it up): what a migration from the first layout did not
// take as the host's, and why. Commands show them; nothing else does.
func (s *Store) Warnings() []string {
	s.warnMu.Lock()
	defer s.warnMu.Unlock()
	return slices.Clone(s.warnings)
}

// hostOnly says how someone other than the host could have written issue
// id's files from before chains (issue.yaml, and events.jsonl when there
// is one), or put them where they are; "" when only the host could have.
// Only such files are adopted (docs/SECURITY.md).
func (s *Store) hostOnly(id int) (path, why string) {
	for _, path := range []string{s.path(id), filepath.Join(s.HostDir(id), eventsFile)} {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if why := s.layout.HostOnly(path); why != "" {
			return path, why
		}
	}
	return "", ""
}

// leftAlone keeps the warning that path was not adopted.
func (s *Store) leftAlone(path, why string) {
	s.warn(statedir.Migration{LeftAlone: []statedir.LeftAlone{{Path: path, Why: why}}}.Warnings()...)
}

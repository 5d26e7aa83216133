package chain

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Records are the record files of one directory (Dir/*.yaml), each a
// File with its own log. A record without its log was written by someone
// who did not log it: records from before logs get theirs from Adopt,
// which only the migration of a state directory from before logs calls
// (statedir.Layout.Migrate).
type Records struct{ Dir string }

// File is the record named name (a plain file name).
func (r Records) File(name string) File { return FileAt(filepath.Join(r.Dir, name)) }

// Read returns record name's content, checked against its log (see
// File.Read): a record without its log is a *ChangedError wrapping
// ErrUnlogged. Neither record nor log is an error wrapping
// fs.ErrNotExist.
func (r Records) Read(name string) ([]byte, error) {
	data, err := r.File(name).Read()
	if err != nil {
		return nil, err
	}
	return data, nil
}

// Write logs data as record name's new version, then replaces the
// record (see File.Write). The caller holds the record's lock.
func (r Records) Write(name string, data []byte) error {
	return r.File(name).Write(data, 0o644)
}

// Adopt gives every record without a log its log, from its content as
// it is. Adopting is safe beside writers, and again after a crash: a log
// is only ever created whole and exclusively, and a record that has one
// is left alone.
func (r Records) Adopt() error {
	names, err := filepath.Glob(filepath.Join(r.Dir, "*.yaml"))
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := FileAt(name).Adopt(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("start the log of %s: %w", name, err)
		}
	}
	return nil
}

package chain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Records are the record files of one directory (Dir/*.yaml), each a
// File with its own log. A marker (Dir/.chained) says every record there
// has its log: Init, called when the directory is opened, gives the
// records from before logs theirs (Adopt) and writes it. From then on a
// record without a log was written by someone who did not log it.
type Records struct{ Dir string }

// File is the record named name (a plain file name).
func (r Records) File(name string) File { return FileAt(filepath.Join(r.Dir, name)) }

func (r Records) marker() string { return filepath.Join(r.Dir, ".chained") }

// Init gives every record without a log its log, then writes the
// marker; with the marker there, it does nothing. Call it when the
// directory is opened, before anyone can have written a record by hand:
// what it finds unlogged, it takes as written before logs.
func (r Records) Init() error {
	if _, err := os.Stat(r.marker()); err == nil {
		return nil
	}
	return r.adoptAll()
}

// Read returns record name's content, checked against its log (see
// File.Read). Neither record nor log is an error wrapping
// fs.ErrNotExist.
func (r Records) Read(name string) ([]byte, error) {
	data, err := r.File(name).Read()
	if !errors.Is(err, ErrUnlogged) {
		return data, err
	}
	if _, serr := os.Stat(r.marker()); serr == nil {
		return nil, err
	}
	// Not opened by Init yet (or by a process that may not write here):
	// a record from before logs.
	if ierr := r.Init(); ierr != nil && !errors.Is(ierr, fs.ErrPermission) {
		return nil, ierr
	}
	return data, nil
}

// Write logs data as record name's new version, then replaces the
// record (see File.Write). The caller holds the record's lock.
func (r Records) Write(name string, data []byte) error {
	if err := r.Init(); err != nil {
		return err
	}
	return r.File(name).Write(data, 0o644)
}

// adoptAll gives every record without a log its log, then writes the
// marker. Adopting is safe beside writers: a log is only ever created
// whole and exclusively.
func (r Records) adoptAll() error {
	names, err := filepath.Glob(filepath.Join(r.Dir, "*.yaml"))
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := FileAt(name).Adopt(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("start the log of %s: %w", name, err)
		}
	}
	stamp := fmt.Sprintf("every record here has its log since %s\n", time.Now().UTC().Format(time.RFC3339))
	return os.WriteFile(r.marker(), []byte(stamp), 0o644)
}

package chain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
)

// File is a small record file whose every version is logged, content
// included, in a chain beside it (Log): Write appends the new version to
// the log, synced, before it replaces the file, and Read checks that the
// file is the version the log holds last. A crash between the two leaves
// the log ahead of the file; Read then returns the logged version, which
// the next Write puts in the file before it logs its own.
type File struct {
	Path string
	Log  Log
}

// FileAt is the file at path, logged in the file beside it named like it
// with the extension .chain.jsonl (prs/1.yaml: prs/1.chain.jsonl).
func FileAt(path string) File {
	return File{Path: path, Log: Log{Path: strings.TrimSuffix(path, filepath.Ext(path)) + ".chain.jsonl"}}
}

// Version is one line of a File's log.
type Version struct {
	// File is the file's name, so a log copied beside another file does
	// not vouch for it.
	File string `json:"file"`
	// SHA256 is the content's hash; Replaces the hash of the content it
	// replaced ("" for a file's first version).
	SHA256   string    `json:"sha256"`
	Replaces string    `json:"replaces,omitempty"`
	At       time.Time `json:"at"`
	Content  string    `json:"content"`
}

// ErrUnlogged is a file that has no log: written before it had one, or
// by someone who did not log it (see ChangedError).
var ErrUnlogged = errors.New("it has no log")

// ChangedError says a File is not the version its log holds last: it was
// written without going through the log.
type ChangedError struct {
	Path, Log string
	// Err says how: ErrUnlogged, or a reason for a person.
	Err error
	// Found is the file's content (nil when it was removed); Logged is
	// the content of the version its log holds last (nil when it holds
	// none that checks out). A caller that knows the format says from
	// the two what changed.
	Found, Logged []byte
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s is not the version last written through its log (%s): %v", e.Path, e.Log, e.Err)
}

func (e *ChangedError) Unwrap() error { return e.Err }

func (f File) changed(why string) *ChangedError {
	return &ChangedError{Path: f.Path, Log: f.Log.Path, Err: errors.New(why)}
}

// Read returns the file's content, checked against its log. A file with
// no log is a *ChangedError wrapping ErrUnlogged, its content returned
// with it (the caller knows whether files from before logs may still be
// there); neither file nor log is an error wrapping fs.ErrNotExist.
func (f File) Read() ([]byte, error) {
	data, rerr := os.ReadFile(f.Path)
	if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return nil, rerr
	}
	last, err := f.last()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if rerr != nil {
			return nil, rerr
		}
		return data, &ChangedError{Path: f.Path, Log: f.Log.Path, Err: ErrUnlogged, Found: data}
	case err != nil:
		var ce *ChangedError
		if errors.As(err, &ce) && rerr == nil {
			ce.Found = data
		}
		return nil, err
	}
	sum := hashOf(data)
	switch {
	case rerr == nil && sum == last.SHA256:
		return data, nil
	case rerr == nil && sum == last.Replaces, rerr != nil && last.Replaces == "":
		// Logged, but a crash stopped the write before the file was
		// replaced: the log holds the version.
		return []byte(last.Content), nil
	case rerr != nil:
		ce := f.changed("it was removed")
		ce.Logged = []byte(last.Content)
		return nil, ce
	}
	ce := f.changed("its content is not the last version its log holds")
	ce.Found, ce.Logged = data, []byte(last.Content)
	return nil, ce
}

// last is the log's last version, checked.
func (f File) last() (Version, error) {
	tail, err := f.Log.Tail()
	if errors.Is(err, fs.ErrNotExist) || (err == nil && tail.Empty()) {
		return Version{}, fs.ErrNotExist
	}
	var le *Error
	if errors.As(err, &le) {
		return Version{}, f.changed("the last line of its log: " + le.Err.Error())
	}
	if err != nil {
		return Version{}, err
	}
	var v Version
	if err := tail.Last.Decode(&v); err != nil || v.SHA256 == "" {
		return Version{}, f.changed("the last line of its log is not a version of a file")
	}
	if v.File != filepath.Base(f.Path) {
		return Version{}, f.changed(fmt.Sprintf("its log is the log of %s", v.File))
	}
	return v, nil
}

// Write logs data as the file's new version, then replaces the file with
// it. The caller serializes writers (a file lock); a log whose last line
// does not check out is a *ChangedError, and nothing is written.
func (f File) Write(data []byte, perm os.FileMode) error {
	tail, err := f.Log.Tail()
	var le *Error
	switch {
	case errors.As(err, &le):
		return f.changed("the last line of its log: " + le.Err.Error())
	case errors.Is(err, fs.ErrNotExist):
		// A new file: its log starts empty. (A file written before it had
		// a log gets one from Adopt, before anything writes it.)
		if err := f.create(nil, true); err != nil {
			return err
		}
		if tail, err = f.Log.Tail(); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if err := f.Log.DropTorn(tail); err != nil {
		return err
	}
	replaces := ""
	if !tail.Empty() {
		var last Version
		if err := tail.Last.Decode(&last); err != nil {
			return f.changed("the last line of its log is not a version of a file")
		}
		replaces = last.SHA256
		if err := f.finish(last, perm); err != nil {
			return err
		}
	}
	v := Version{File: filepath.Base(f.Path), SHA256: hashOf(data), Replaces: replaces, At: time.Now().UTC(), Content: string(data)}
	// The new content is on disk beside the file before its line is
	// logged: a disk with no room for it (docs/RELIABILITY.md) refuses
	// the Write before anything is logged, rather than leave a version
	// logged that the file never got, which reads as a change made
	// outside agenttree.
	pending, err := atomicfile.Prepare(f.Path, data, perm)
	if err != nil {
		return err
	}
	if _, err := f.Log.Append(tail.Last.Hash, v); err != nil {
		pending.Discard()
		return err
	}
	if logged != nil {
		if err := logged(); err != nil {
			pending.Discard()
			return err
		}
	}
	return pending.Commit()
}

// logged, set by tests only, runs between a Write's line in the log and
// the file's replacement; its error stops the Write there, as a crash
// does.
var logged func() error

// finish writes the version the log holds last to the file, when a crash
// stopped that version's Write before the file was replaced (the file is
// the version it replaces, or missing where it was the first): a Write
// cut short after it is then one version ahead of the file again, the
// crash Read tells from a change made outside agenttree, not two. A file
// in any other state is left as it is, for the new version to replace.
func (f File) finish(last Version, perm os.FileMode) error {
	data, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && last.Replaces == "":
	case err != nil:
		return nil
	case hashOf(data) == last.SHA256 || hashOf(data) != last.Replaces:
		return nil
	}
	return atomicfile.Write(f.Path, []byte(last.Content), perm)
}

// Adopt logs the file's content as it is, if it has no log yet: how a
// file written before it had a log gets one. Two processes adopting at
// once (or adopting while one writes) make one log.
func (f File) Adopt() error {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return err
	}
	return f.create(data, false)
}

// create makes the log with its first line, a version of data (no line
// when empty is set: the log of a file about to be written the first
// time). The log appears whole, exclusively: if it exists, it is left
// alone.
func (f File) create(data []byte, empty bool) error {
	if empty {
		err := writeSynced(f.Log.Path, os.O_CREATE|os.O_EXCL, nil)
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	raw, _, err := Encode("", Version{File: filepath.Base(f.Path), SHA256: hashOf(data), At: time.Now().UTC(), Content: string(data)})
	if err != nil {
		return err
	}
	// Written aside and linked in: a writer never sees the log before
	// its first line is in it.
	tmp, err := os.CreateTemp(filepath.Dir(f.Log.Path), "."+filepath.Base(f.Log.Path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil { // readable as the logs Append makes
		tmp.Close()
		return err
	}
	tmp.Close()
	if err := writeSynced(tmp.Name(), os.O_TRUNC, raw); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), f.Log.Path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

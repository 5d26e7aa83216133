package chain

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Log is a chain kept in the file at Path. Appends must be serialized by
// the caller (a file lock): two writers reading the same last line would
// both append after it.
type Log struct{ Path string }

// Append writes the line that follows prev with data's members, and
// syncs it to disk before returning: once Append returns, the line
// survives a crash.
func (l Log) Append(prev string, data any) (Line, error) {
	raw, line, err := Encode(prev, data)
	if err != nil {
		return Line{}, err
	}
	if err := l.AppendEncoded(raw); err != nil {
		return Line{}, err
	}
	return line, nil
}

// AppendEncoded writes raw, a line Encode made to follow the log's last
// line, and syncs it to disk before returning, as Append does. It lets a
// caller that needs the line's hash before the line is on disk (to write
// the file that names it while the line is synced) encode it first.
func (l Log) AppendEncoded(raw []byte) error {
	if err := appendSynced(l.Path, raw); err != nil {
		return fmt.Errorf("append to %s: %w", l.Path, err)
	}
	return nil
}

// Tail is the end of a log, read from the back.
type Tail struct {
	// Last is the last complete line, its own hash checked; zero when
	// the log has none.
	Last Line
	// Size is the log's length; Torn the length of an incomplete line
	// after Last (an append cut short), 0 when there is none.
	Size, Torn int64
}

// Empty reports whether the log holds no complete line.
func (t Tail) Empty() bool { return t.Last.Hash == "" }

// tailBlock is how much of a log's end is read at first: a line or two.
const tailBlock = 8 << 10

// Tail reads the log's last line, from the end of the file: its cost does
// not grow with the log. A missing log is an error wrapping
// os.ErrNotExist; a last line that does not check out is an *Error (its
// N is 0: the line's number is not known from the end).
func (l Log) Tail() (Tail, error) {
	f, err := os.Open(l.Path)
	if err != nil {
		return Tail{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Tail{}, err
	}
	size := st.Size()
	for block := int64(tailBlock); ; block *= 4 {
		start := max(size-block, 0)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return Tail{}, fmt.Errorf("read %s: %w", l.Path, err)
		}
		t, ok, err := lastLine(buf, start, size)
		if ok || start == 0 {
			return t, err
		}
	}
}

// lastLine finds the last complete line in buf, the end of a log of size
// bytes read from offset start. ok is false when buf does not reach back
// to that line's start.
func lastLine(buf []byte, start, size int64) (Tail, bool, error) {
	t := Tail{Size: size}
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		t.Torn = int64(len(buf))
		return t, start == 0, nil
	}
	t.Torn = int64(len(buf) - end - 1)
	from := bytes.LastIndexByte(buf[:end], '\n') + 1
	if from == 0 && start > 0 {
		return t, false, nil
	}
	offset := start + int64(from)
	line, err := Parse(buf[from:end])
	if err != nil {
		return t, true, &Error{Offset: offset, Err: err}
	}
	line.Offset = offset
	t.Last = line
	return t, true, nil
}

// DropTorn cuts the incomplete line t found after the log's last
// complete one: the bytes of an append a crash cut short, which no one
// can have relied on (the append never returned). t must be the log's
// current Tail, read under the lock its writers hold.
func (l Log) DropTorn(t Tail) error {
	if t.Torn == 0 {
		return nil
	}
	if err := os.Truncate(l.Path, t.Size-t.Torn); err != nil {
		return fmt.Errorf("drop the incomplete last line of %s: %w", l.Path, err)
	}
	return nil
}

// Verify reads the whole log and checks every line (see Verify). A
// missing log is an error wrapping os.ErrNotExist.
func (l Log) Verify() ([]Line, error) {
	f, err := os.Open(l.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Verify(f)
}

// SetAside moves the lines from offset on into the file aside (appended
// to it, made if missing) and cuts them off the log, which keeps the
// lines before: how a chain is taken back to its last good line without
// losing what followed it. It returns how many lines it moved.
func (l Log) SetAside(offset int64, aside string) (int, error) {
	f, err := os.Open(l.Path)
	if err != nil {
		return 0, err
	}
	rest, err := io.ReadAll(io.NewSectionReader(f, offset, math.MaxInt64-offset))
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", l.Path, err)
	}
	if len(rest) == 0 {
		return 0, nil
	}
	if err := appendSynced(aside, rest); err != nil {
		return 0, fmt.Errorf("set lines of %s aside in %s: %w", l.Path, aside, err)
	}
	if err := os.Truncate(l.Path, offset); err != nil {
		return 0, fmt.Errorf("cut %s back to its last good line (what followed is in %s): %w", l.Path, aside, err)
	}
	n := bytes.Count(rest, []byte("\n"))
	if rest[len(rest)-1] != '\n' {
		n++
	}
	return n, nil
}

// appendSynced appends data to the file at path, made if missing, and
// syncs it to disk. An append that fails (a full disk) is cut off again,
// so that the file is as it was; only a crash leaves part of it, which
// Tail reports as Torn.
func appendSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil {
		if _, err = f.Write(data); err == nil {
			err = f.Sync()
		}
		if err != nil {
			// The caller holds the lock its writers take: the file's end
			// is this append's.
			_ = f.Truncate(st.Size())
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeSynced writes data to the file at path, opened write-only with
// flag, and syncs it to disk.
func writeSynced(path string, flag int, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

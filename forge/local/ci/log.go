package ci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/lines"
)

// logKeep bounds the CI output kept per commit: its end, where failures are.
const logKeep = 256 << 10

// Log returns the last n lines (all that is kept when n <= 0) of the
// output of c's attempt (the latest when c has no ID), or "" when there
// is none.
func (r *Runs) Log(ctx context.Context, c forge.Check, n int) (string, error) {
	if c.SHA == "" || strings.ContainsAny(c.SHA, `/\.`) {
		return "", nil
	}
	if r.opts.Command == "" {
		return "agenttree: " + noCommandNote + "; there is no CI to run", nil
	}
	attempt := int(c.ID)
	if attempt <= 0 {
		rec, err := r.read(c.SHA)
		if err != nil || rec == nil {
			return "", err
		}
		attempt = rec.Attempt
	}
	data, err := os.ReadFile(r.runPath(c.SHA, attempt, ".log"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return lines.Tail(string(data), n), nil
}

// finishLog keeps the end of the attempt's log and appends the verdict.
func (r *Runs) finishLog(sha string, attempt int, verdict string) error {
	path := r.runPath(sha, attempt, ".log")
	out, err := tailFile(path, logKeep)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(sha), err)
	}
	if len(out) > 0 {
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		out = append(out, '\n')
	}
	out = append(out, verdict+"\n"...)
	if err := atomicfile.Write(path, out, 0o644); err != nil {
		return fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(sha), err)
	}
	return nil
}

// tailFile reads the last max bytes of path, from a line start, marked as
// cut when it is.
func tailFile(path string, max int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() <= max {
		return io.ReadAll(fh)
	}
	if _, err := fh.Seek(st.Size()-max, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[i+1:]
	}
	return append([]byte("[... earlier output dropped ...]\n"), data...), nil
}

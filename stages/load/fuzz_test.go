package load_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// FuzzParse loads any text against the real hook catalog, in either
// spelling (testdata/fuzz/FuzzParse holds the repository's own config,
// testdata/pipelines, the examples and this package's testdata, list form
// and map form). The loader promises a place for every problem
// (docs/ARCHITECTURE.md §2, stages/load): it never panics, a config it
// refuses is a *stages.LoadError, and each diagnostic names the file and
// a line:col inside the text.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"stages:\n",
		"stages:\n  - name: a\n",
		"stages:\n  a:\n    role: developer\n",
		"flows:\n  default: [a, b]\nstages:\n  - name: a\n  - name: b\n    terminal: accepted\n",
		"stages: [\n",
		"\t- x\n",
		"a: &x [*x]\n",
	} {
		f.Add([]byte(seed))
	}
	const file = "/repo/.agenttree.yaml"
	cat := catalog()
	f.Fuzz(func(t *testing.T, data []byte) {
		var cfg *stages.Config
		var err error
		within(t, 10*time.Second, func() { cfg, err = load.Parse(file, data, cat) })
		if err == nil {
			require.NotNil(t, cfg)
			require.Contains(t, []stages.Form{stages.Canonical, stages.Compatible}, cfg.Form)
			for _, w := range cfg.Warnings {
				requireInside(t, data, file, w)
			}
			return
		}
		var le *stages.LoadError
		require.True(t, errors.As(err, &le), "not a LoadError: %v", err)
		require.NotEmpty(t, le.Diagnostics)
		for _, d := range le.Diagnostics {
			requireInside(t, data, file, d)
		}
	})
}

// requireInside checks that d names file and a line:col of data: a line
// that exists (the one after a last line feed included) and a column at
// most one past its end. Lines end where YAML says they do: at \n, \r\n,
// \r, and the Unicode breaks YAML 1.1 reads (yaml.v3 counts those too).
func requireInside(t *testing.T, data []byte, file string, d stages.Diagnostic) {
	t.Helper()
	require.Equal(t, file, d.Pos.File, "%s", d)
	lines := yamlLines(data)
	require.GreaterOrEqual(t, d.Pos.Line, 1, "%s", d)
	require.LessOrEqual(t, d.Pos.Line, len(lines), "%s", d)
	require.GreaterOrEqual(t, d.Pos.Col, 1, "%s", d)
	// yaml.v3 counts columns in characters; a byte that is not UTF-8
	// counts as one.
	require.LessOrEqual(t, d.Pos.Col, utf8.RuneCount(lines[d.Pos.Line-1])+1, "%s", d)
}

// yamlLines splits data at every line break YAML knows.
func yamlLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexAny(data, "\r\n\u0085\u2028\u2029")
		if i < 0 {
			break
		}
		out = append(out, data[:i])
		r, size := utf8.DecodeRune(data[i:])
		if r == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			size = 2
		}
		data = data[i+size:]
	}
	return append(out, data)
}

// within runs fn, failing the test if it has not returned after d: a
// fuzzed input that hangs the loader is a crasher too, which the fuzzing
// engine keeps only when the input fails rather than stalls. A panic in
// fn fails the test with its stack, as it would have without the
// goroutine (rather than ending the fuzzing process).
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
				return
			}
			done <- nil
		}()
		fn()
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatal(p)
		}
	case <-time.After(d):
		t.Fatalf("still running after %s", d)
	}
}

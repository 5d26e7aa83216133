package chain_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
)

type entry struct {
	N    int    `json:"n"`
	What string `json:"what"`
}

// sampleLog is a valid log of n lines, and its lines.
func sampleLog(t testing.TB, n int) ([]byte, []chain.Line) {
	t.Helper()
	var (
		buf   bytes.Buffer
		lines []chain.Line
		prev  string
	)
	for i := range n {
		raw, line, err := chain.Encode(prev, entry{N: i + 1, What: "stage: implement.code → accepted"})
		require.NoError(t, err)
		buf.Write(raw)
		lines = append(lines, line)
		prev = line.Hash
	}
	return buf.Bytes(), lines
}

func TestLinesArePlainJSONWithPrevFirstAndHashLast(t *testing.T) {
	raw, line, err := chain.Encode("", entry{N: 1, What: "create"})
	require.NoError(t, err)
	assert.Regexp(t, `^\{"prev":"","n":1,"what":"create","hash":"[0-9a-f]{64}"\}\n$`, string(raw))
	var got entry
	require.NoError(t, line.Decode(&got))
	assert.Equal(t, entry{N: 1, What: "create"}, got)

	parsed, err := chain.Parse(bytes.TrimSuffix(raw, []byte("\n")))
	require.NoError(t, err)
	assert.Equal(t, line.Hash, parsed.Hash)

	_, _, err = chain.Encode("", []string{"not", "an", "object"})
	assert.Error(t, err)
	_, _, err = chain.Encode("not-a-hash", entry{})
	assert.Error(t, err)
}

func TestVerify(t *testing.T) {
	good, lines := sampleLog(t, 4)
	split := bytes.SplitAfter(good, []byte("\n"))[:4]
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	edit := func(i int, from, to string) []byte {
		parts := make([][]byte, len(split))
		copy(parts, split)
		parts[i] = bytes.Replace(parts[i], []byte(from), []byte(to), 1)
		return join(parts...)
	}
	for _, tt := range []struct {
		name    string
		log     []byte
		lines   int // that verify
		wantErr error
		badLine int
	}{
		{name: "whole", log: good, lines: 4},
		{name: "empty", log: nil, lines: 0},
		{name: "a line's content edited", log: edit(1, `"n":2`, `"n":9`), lines: 1, wantErr: chain.ErrHash, badLine: 2},
		{name: "a line's white space edited", log: edit(2, `"n":3`, `"n": 3`), lines: 2, wantErr: chain.ErrHash, badLine: 3},
		{name: "a line's hash edited", log: edit(3, lines[3].Hash, lines[2].Hash), lines: 3, wantErr: chain.ErrHash, badLine: 4},
		{name: "a line removed", log: join(split[0], split[2], split[3]), lines: 1, wantErr: chain.ErrLink, badLine: 2},
		{name: "lines swapped", log: join(split[0], split[2], split[1], split[3]), lines: 1, wantErr: chain.ErrLink, badLine: 2},
		{name: "a line repeated", log: join(split[0], split[1], split[1]), lines: 2, wantErr: chain.ErrLink, badLine: 3},
		{name: "first line removed", log: join(split[1], split[2]), lines: 0, wantErr: chain.ErrLink, badLine: 1},
		{name: "a line that is not a chain line", log: join(split[0], []byte(`{"n":2}`+"\n")), lines: 1, wantErr: chain.ErrFormat, badLine: 2},
		{name: "a blank line", log: join(split[0], []byte("\n"), split[1]), lines: 1, wantErr: chain.ErrFormat, badLine: 2},
		{name: "an incomplete last line", log: join(split[0], split[1][:20]), lines: 1, wantErr: chain.ErrTorn, badLine: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chain.Verify(bytes.NewReader(tt.log))
			assert.Len(t, got, tt.lines)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			var ce *chain.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.badLine, ce.N)
			assert.EqualValues(t, len(join(split[:min(tt.lines, len(split))]...)), ce.Offset, "the bad line starts where the good ones end")
		})
	}
}

func TestTailReadsTheLastLineFromTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	log := chain.Log{Path: path}
	_, err := log.Tail()
	require.ErrorIs(t, err, os.ErrNotExist)

	// Lines longer than the first block read from the end.
	long := entry{What: string(bytes.Repeat([]byte("x"), 20<<10))}
	var last chain.Line
	for i := range 3 {
		long.N = i
		last, err = log.Append(last.Hash, long)
		require.NoError(t, err)
	}
	tail, err := log.Tail()
	require.NoError(t, err)
	assert.Equal(t, last.Hash, tail.Last.Hash)
	assert.Zero(t, tail.Torn)

	// A torn append after it: the last complete line is still the last.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"prev":"` + last.Hash + `","n":`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	tail, err = log.Tail()
	require.NoError(t, err)
	assert.Equal(t, last.Hash, tail.Last.Hash)
	assert.Positive(t, tail.Torn)
	require.NoError(t, log.DropTorn(tail))
	lines, err := log.Verify()
	require.NoError(t, err)
	assert.Len(t, lines, 3)

	// An edited last line is an error, found from the end.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, bytes.Replace(data, []byte(`"n":2`), []byte(`"n":7`), 1), 0o644))
	_, err = log.Tail()
	assert.ErrorIs(t, err, chain.ErrHash)
}

func TestSetAsideKeepsTheLinesItCuts(t *testing.T) {
	dir := t.TempDir()
	good, _ := sampleLog(t, 4)
	path := filepath.Join(dir, "events.jsonl")
	require.NoError(t, os.WriteFile(path, good, 0o644))
	aside := filepath.Join(dir, "aside.jsonl")
	split := bytes.SplitAfter(good, []byte("\n"))

	n, err := chain.Log{Path: path}.SetAside(int64(len(split[0])+len(split[1])), aside)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	kept, err := os.ReadFile(path)
	require.NoError(t, err)
	moved, err := os.ReadFile(aside)
	require.NoError(t, err)
	assert.Equal(t, good, append(kept, moved...), "nothing is lost")
	got, err := chain.Log{Path: path}.Verify()
	require.NoError(t, err)
	assert.Len(t, got, 2)
}

// FuzzVerify: verification never panics, and never accepts a log that is
// not the original's lines, whole and in order, up to some line (lines
// cut off the end are for the head kept elsewhere to notice).
func FuzzVerify(f *testing.F) {
	orig, _ := sampleLog(f, 4)
	f.Add(orig)
	f.Add(orig[:len(orig)/2])
	f.Add(bytes.Replace(orig, []byte(`"n":2`), []byte(`"n":3`), 1))
	f.Add(append(bytes.Clone(orig), '\n'))
	f.Add([]byte(`{"prev":"","hash":"` + string(bytes.Repeat([]byte("0"), 64)) + `"}` + "\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		lines, err := chain.Verify(bytes.NewReader(log))
		var accepted int
		for _, l := range lines {
			accepted = int(l.Offset) + len(l.Body) + 75 // "hash" member and line feed
			if int(l.Offset) > len(log) {
				t.Fatalf("line %d starts past the end", l.N)
			}
		}
		if len(lines) > 0 {
			require.LessOrEqual(t, accepted, len(log))
			require.True(t, bytes.HasPrefix(orig, log[:accepted]), "accepted lines that are not the original's: %q", log[:accepted])
		}
		if err == nil {
			require.True(t, bytes.HasPrefix(orig, log), "accepted a modified log: %q", log)
			require.Equal(t, bytes.Count(log, []byte("\n")), len(lines))
		}
	})
}

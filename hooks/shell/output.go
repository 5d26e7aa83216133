package shell

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agenttree/agenttree/internal/textsafe"
)

// jsonOutputs reads the outputs a command reports as a JSON object: the
// last complete object in its output, on one line or pretty-printed over
// many, whatever lines follow it. Strings are kept as they are; anything
// else is kept as JSON (compacted when it spans lines). When the last
// thing in the output that looks like an object (a line starting with
// `{`) cannot be read, the warning says so: its keys are not silently
// lost.
func jsonOutputs(output string) (map[string]string, []string) {
	out := map[string]string{}
	obj, broken := lastObject(output)
	for k, raw := range obj {
		var s string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			out[k] = s
		case bytes.ContainsRune(raw, '\n'):
			var b bytes.Buffer
			_ = json.Compact(&b, raw) // raw is valid JSON: the decoder read it
			out[k] = b.String()
		default:
			out[k] = string(raw)
		}
	}
	if broken == nil {
		return out, nil
	}
	warning := fmt.Sprintf("run: the output's line %q looks like a JSON object but could not be read (%v), so none of its keys became outputs; "+
		"print the outputs as one JSON object (on one line or pretty-printed)", textsafe.Clip(broken.line, 61), broken.err)
	if obj != nil {
		warning += "; the outputs are those of the JSON object before it"
	}
	return out, []string{warning}
}

// brokenObject is a line that starts like a JSON object but does not
// decode as one.
type brokenObject struct {
	line string
	err  error
}

// lastObject finds the last complete JSON object in output with a
// json.Decoder: each line that starts with `{` (after blanks) is tried as
// the start of one, and a value read skips the lines inside it, so an
// object nested in a pretty-printed one is never taken for the whole. It
// also reports a line that starts like an object after the last one read
// but is none.
func lastObject(output string) (map[string]json.RawMessage, *brokenObject) {
	var (
		last   map[string]json.RawMessage
		broken *brokenObject
	)
	for pos := 0; pos < len(output); {
		line, next := output[pos:], len(output)
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], pos+i+1
		}
		trimmed := strings.TrimLeft(line, " \t\r")
		if !strings.HasPrefix(trimmed, "{") {
			pos = next
			continue
		}
		start := pos + len(line) - len(trimmed)
		dec := json.NewDecoder(strings.NewReader(output[start:]))
		var obj map[string]json.RawMessage
		if err := dec.Decode(&obj); err != nil {
			broken = &brokenObject{line: strings.TrimSpace(line), err: err}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				// Unclosed to the end: every line after it is inside it.
				return last, broken
			}
			// The lines before the error's are inside it: an object among
			// them is a part of it, not one of its own. The error's own
			// line may start the next object.
			pos = next
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) && syntax.Offset > 0 {
				bad := min(start+int(syntax.Offset)-1, len(output))
				pos = max(next, strings.LastIndexByte(output[:bad], '\n')+1)
			}
			continue
		}
		last, broken = obj, nil
		// Go on after the object, at the start of the next line: what
		// follows it on its own line is no object of its own.
		pos = lineAfter(output, start+int(dec.InputOffset()))
	}
	return last, broken
}

// lineAfter is where the line after the one holding offset starts, or
// the end of s.
func lineAfter(s string, offset int) int {
	offset = min(offset, len(s))
	if i := strings.IndexByte(s[offset:], '\n'); i >= 0 {
		return offset + i + 1
	}
	return len(s)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > b.max {
		p = p[len(p)-b.max:]
	}
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return n, nil
}

func (b *tailBuffer) String() string { return string(bytes.ToValidUTF8(b.buf, nil)) }

package shell

import (
	"bytes"
	"encoding/json"
	"strings"
)

// jsonOutputs reads the outputs a command reports as a JSON object on its
// last non-empty line. Strings are kept as they are; anything else is kept
// as JSON.
func jsonOutputs(tail []string) map[string]string {
	out := map[string]string{}
	if len(tail) == 0 {
		return out
	}
	last := strings.TrimSpace(tail[len(tail)-1])
	if !strings.HasPrefix(last, "{") {
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(last), &obj) != nil {
		return out
	}
	for k, raw := range obj {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(raw)
		}
	}
	return out
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

package record

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// EncodeWatch is yaml.Marshal(w), byte for byte, without its reflection
// and event machinery, which cost the controller most of a tick's CPU:
// it writes watch.yaml for every due issue on every tick, and keeps the
// hash of the bytes it wrote (docs/ARCHITECTURE.md §6). The same bytes
// whichever encoder wrote them keep that hash, and the file, as they
// were. A string is written here only in the styles yaml.v3 provably
// gives it (plain, single- or double-quoted on one line, of printable
// characters); any other string, and keys that yaml.v3 does not put in
// one order, hand the whole file to yaml.Marshal.
func EncodeWatch(w *WatchFile) ([]byte, error) {
	if w == nil {
		return yaml.Marshal(w)
	}
	e := watchEncoder{b: make([]byte, 0, watchSize(w))}
	e.file(w)
	if e.slow {
		return yaml.Marshal(w)
	}
	return e.b, nil
}

// watchSize is about the size of w's file, so that the buffer is not
// grown as it is written.
func watchSize(w *WatchFile) int {
	n := 16
	for k, v := range w.Hooks {
		n += 8 + len(k) + len(v)
	}
	if p := w.Poll; p != nil {
		n += 400 + len(p.Stage) + len(p.Head) + len(p.FeedbackMark) + len(p.ReviewMark) + len(p.Status)
		for _, ss := range [][]string{p.Handled, p.Noted, p.Failing} {
			for _, s := range ss {
				n += 14 + len(s)
			}
		}
		for k := range p.FixAttempts {
			n += 32 + len(k)
		}
		for _, a := range p.Actions {
			n += 64 + len(a.What)
		}
	}
	return n
}

// watchEncoder writes a WatchFile as yaml.v3 does with its default
// indent of 4: a block mapping's entries 4 columns in from its key, a
// sequence's "- " 4 columns in, and a mapping in a sequence 2 columns
// past its "- " (yaml.v3 emitterc.go, yaml_emitter_increase_indent).
type watchEncoder struct {
	b []byte
	// slow is set at the first value this encoder does not write as
	// yaml.v3 would: the caller then asks yaml.v3.
	slow bool
}

func (e *watchEncoder) file(w *WatchFile) {
	if len(w.Hooks) == 0 && w.Poll == nil {
		e.b = append(e.b, "{}\n"...) // an empty mapping at the root is written in flow style
		return
	}
	if len(w.Hooks) > 0 {
		e.b = append(e.b, "hooks:\n"...)
		for _, k := range sortedKeys(e, w.Hooks) {
			e.key(4, k)
			e.str(w.Hooks[k], false)
			e.b = append(e.b, '\n')
		}
	}
	if w.Poll != nil {
		e.b = append(e.b, "poll:\n"...)
		e.poll(w.Poll)
	}
}

// poll writes p's fields in their order in Poll, leaving out the
// omitempty ones that are zero as yaml.v3's isZero does (a zero time by
// its IsZero, an empty map or slice, a nil pointer).
func (e *watchEncoder) poll(p *Poll) {
	e.intField(4, "pr", p.PR)
	if p.Stage != "" {
		e.strField(4, "stage", p.Stage)
	}
	e.strField(4, "head", p.Head)
	e.timeField(4, "pushed_at", p.PushedAt)
	e.timeField(4, "started", p.Started)
	e.intField(4, "iteration", p.Iteration)
	e.intField(4, "interval_s", p.IntervalS)
	e.timeField(4, "next_at", p.NextAt)
	e.strList(4, "handled", p.Handled)
	if p.FeedbackMark != "" {
		e.strField(4, "feedback_mark", p.FeedbackMark)
	}
	if p.ReviewMark != "" {
		e.strField(4, "review_mark", p.ReviewMark)
	}
	e.strList(4, "noted", p.Noted)
	if !p.PolledAt.IsZero() {
		e.timeField(4, "polled_at", p.PolledAt)
	}
	if len(p.FixAttempts) > 0 {
		e.b = append(e.b, "    fix_attempts:\n"...)
		for _, k := range sortedKeys(e, p.FixAttempts) {
			e.key(8, k)
			e.b = strconv.AppendInt(e.b, int64(p.FixAttempts[k]), 10)
			e.b = append(e.b, '\n')
		}
	}
	if p.ForgeErrors != 0 {
		e.intField(4, "forge_errors", p.ForgeErrors)
	}
	if p.ErrorsSince != 0 {
		e.intField(4, "errors_since", p.ErrorsSince)
	}
	e.strList(4, "failing", p.Failing)
	if c := p.Checks; c != nil {
		e.b = append(e.b, "    checks:\n"...)
		e.intField(8, "total", c.Total)
		e.intField(8, "pending", c.Pending)
		if c.Queued != 0 {
			e.intField(8, "queued", c.Queued)
		}
		e.intField(8, "passing", c.Passing)
		e.intField(8, "failing", c.Failing)
	}
	if p.Status != "" {
		e.strField(4, "status", p.Status)
	}
	if len(p.Actions) > 0 {
		e.b = append(e.b, "    actions:\n"...)
		for _, a := range p.Actions {
			e.b = append(e.b, "        - "...)
			e.timeField(0, "at", a.At)
			e.strField(10, "what", a.What)
		}
	}
}

// name writes a key of this file's own, all plain, and the ": " or ":"
// before its value.
func (e *watchEncoder) name(indent int, name string) {
	e.b = append(e.b, "            "[:indent]...)
	e.b = append(e.b, name...)
	e.b = append(e.b, ':')
}

// key writes a map's key and the ": " before its value.
func (e *watchEncoder) key(indent int, k string) {
	e.b = append(e.b, "            "[:indent]...)
	e.str(k, true)
	e.b = append(e.b, ": "...)
}

func (e *watchEncoder) intField(indent int, name string, v int) {
	e.name(indent, name)
	e.b = append(e.b, ' ')
	e.b = strconv.AppendInt(e.b, int64(v), 10)
	e.b = append(e.b, '\n')
}

func (e *watchEncoder) strField(indent int, name, v string) {
	e.name(indent, name)
	e.b = append(e.b, ' ')
	e.str(v, false)
	e.b = append(e.b, '\n')
}

// timeField writes t as yaml.v3 does, RFC 3339 with nanoseconds as a
// plain scalar, whatever it would resolve to. Such a string is digits
// and "-+:.TZ" only, where no character is an indicator (a '-' or ':'
// is followed by a digit); anything else goes to yaml.v3.
func (e *watchEncoder) timeField(indent int, name string, t time.Time) {
	e.name(indent, name)
	e.b = append(e.b, ' ')
	start := len(e.b)
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	for _, c := range e.b[start:] {
		if !('0' <= c && c <= '9' || strings.IndexByte("-+:.TZ", c) >= 0) {
			e.slow = true
		}
	}
	if s := e.b[start:]; len(s) >= 3 && s[0] == '-' && s[1] == '-' && s[2] == '-' {
		e.slow = true // "---" starts a document
	}
	e.b = append(e.b, '\n')
}

func (e *watchEncoder) strList(indent int, name string, list []string) {
	if len(list) == 0 {
		return
	}
	e.name(indent, name)
	e.b = append(e.b, '\n')
	for _, s := range list {
		e.b = append(e.b, "            "[:indent+4]...)
		e.b = append(e.b, "- "...)
		e.str(s, false)
		e.b = append(e.b, '\n')
	}
}

// sortedKeys are m's keys in yaml.v3's order (sorter.go, keyList.Less).
// That order is not an order for every set of keys (a run of digits too
// long for an int64, a digit that is not ASCII): yaml.v3's own output
// then depends on the map's iteration order, and such keys go to it.
func sortedKeys[V any](e *watchEncoder, m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !orderedKey(k) {
			e.slow = true
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case keyLess(a, b):
			return -1
		}
		return 1
	})
	return keys
}

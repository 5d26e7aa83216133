package record

import (
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

var (
	tNano  = time.Date(2026, 11, 29, 11, 27, 35, 596351729, time.UTC)
	tZone  = time.Date(2026, 3, 1, 8, 0, 0, 0, time.FixedZone("IST", 5*3600+1800))
	tOdd   = time.Date(2026, 3, 1, 8, 0, 0, 0, time.FixedZone("", -(3*3600+25)))
	tFirst = time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3600)) // not zero: an hour before it
)

// steadyWatch is a watch.yaml as bench/controller's steady state writes
// it (_agenttree/host/issues/009/watch.yaml under its temp dir).
func steadyWatch() *WatchFile {
	return &WatchFile{
		Hooks: map[string]string{
			"ci.head":            "8b72c82a5e26997f266d0ae963b170dc0aec0ec4",
			"ci.head_seen_at":    "2026-11-29T11:27:35.596351729Z",
			"ci.started_seen_at": "2026-11-29T11:27:35.596351729Z",
		},
		Poll: &Poll{
			PR: 9, Stage: "pr_ready", Head: "8b72c82a5e26997f266d0ae963b170dc0aec0ec4",
			PushedAt: tNano, Started: tNano, Iteration: 5, IntervalS: 150,
			NextAt: tNano.Add(time.Hour), ReviewMark: "0/0/0", PolledAt: tNano.Add(time.Hour),
			Checks: &Checks{Total: 1, Pending: 1},
			Status: "1 of 1 checks still running on 8b72c82a5e26",
		},
	}
}

// fullWatch has every field set and the actions log full.
func fullWatch() *WatchFile {
	w := steadyWatch()
	p := w.Poll
	p.Handled = []string{"PRRC_kwDOA1", "PRRT_kwDOB2", "12345"}
	p.Noted = []string{"PRRC_kwDOC3"}
	p.FeedbackMark, p.ForgeErrors, p.ErrorsSince = "3/1/2", 2, 14
	p.FixAttempts = map[string]int{"build (ubuntu)": 1, "lint": 2, "test-10": 1, "test-9": 3}
	p.Failing = []string{"lint", "test-9"}
	p.Checks = &Checks{Total: 12, Pending: 3, Queued: 1, Passing: 7, Failing: 2}
	for i := 0; i < MaxActions; i++ {
		p.Log(tNano.Add(time.Duration(i)*time.Minute), []string{
			"new head 8b72c82a5e26", "forwarded 2 review comment(s)",
			"stepped back pr_ready → implement: CI failed: lint, test-9",
			"moved implement → pr_ready", "escalated: budget spent",
		}[i%5])
	}
	return w
}

func poll(mut func(p *Poll)) *WatchFile {
	p := &Poll{PR: 1, Head: "abc", PushedAt: tNano, Started: tNano, NextAt: tNano}
	mut(p)
	return &WatchFile{Poll: p}
}

func hooks(kv ...string) *WatchFile {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &WatchFile{Hooks: m}
}

// trickyStrings are strings yaml.v3 writes in each of its styles, or
// that look like another type, or that it cannot write on one line.
var trickyStrings = []string{
	"", "yes", "no", "Yes", "NO", "on", "Off", "y", "n", "true", "False", "null", "Null", "~",
	"123", "-7", "+7", "1.5", ".5", "1e3", "1E+3", "0x10", "0o17", "0b101", "-0b101", "0b-1", "0o+7", "-0o-7", "017", "1_000", "0_x",
	".inf", "-.Inf", "+.INF", ".nan", ".NaN", ".", "..", "...", "...x", "---", "--- x", "--", "<<",
	"2026-11-29", "2026-1-2", "2026-11-29T11:27:35Z", "2026-11-29 11:27:35", "2026-11-29t11:27:35.5+01:00",
	"2026-13-45", "1:20", "-1:20:30.5", "190:20:30", "1:60",
	"-", "- x", "-x", "x -", ": x", ":x", "x:", "a: b", "a:b", "a :b", "?", "? x", "?x", "x?",
	"#x", "x #y", "x#y", "x # y", "# ", "x,y", "[x]", "x[y]", "{x}", "x{", "&a", "*a", "!x", "x!", "|", ">",
	"'", "'x'", "it's", `"`, `a"b`, `a\b`, `"x"`, "%x", "@x", "`x`", "x%",
	" lead", "trail ", " ", "  ", "a  b", "\t", "a\tb", "tab\t",
	"é", "café: ok", "→", "moved a → b", "日本語", "\u00a0", "x\u00a0", "\ufeff", "x\u2028y", "\u0085", "🚀", "x 🚀",
	"\n", "a\nb", "a\n", "\na", "a\r\nb", "a\rb", "line1\nline2\n\n", " a\nb", "a \nb",
	"\x00", "x\x07", "\x7f", "\xff", "a\xc3", "\xed\xa0\x80",
	strings.Repeat("long word ", 30), strings.Repeat("k", 128), strings.Repeat("k", 129),
	"8b72c82a5e26997f266d0ae963b170dc0aec0ec4", "0123abc", "1234567e8", "0/0/0",
}

func TestEncodeWatchIsYAMLMarshal(t *testing.T) {
	type test struct {
		name string
		w    *WatchFile
		fast bool // written without yaml.v3
		// lost is set where yaml.v3 does not read back what it wrote.
		lost bool
	}
	tests := []test{
		{"nil", nil, false, false},
		{"empty file", &WatchFile{}, true, false},
		{"empty hooks and no poll", &WatchFile{Hooks: map[string]string{}}, true, false},
		{"only hooks", hooks("ci.head", "abc", "n", "1"), true, false},
		{"only poll", poll(func(*Poll) {}), true, false},
		{"zero poll", &WatchFile{Poll: &Poll{}}, true, false},
		{"steady state", steadyWatch(), true, false},
		{"every field set", fullWatch(), true, false},
		{"zero checks", poll(func(p *Poll) { p.Checks = &Checks{} }), true, false},
		{"zero and zoned times", poll(func(p *Poll) {
			p.PushedAt, p.Started, p.PolledAt = time.Time{}, tZone, tFirst
			p.Actions = []Action{{}, {At: tZone, What: "x"}}
		}), true, false},
		// RFC 3339 has no seconds in an offset: the time read back is 25 s off.
		{"a zone of seconds", poll(func(p *Poll) { p.NextAt = tOdd }), true, true},
		{"zero polled_at in a zone", poll(func(p *Poll) { p.PolledAt = time.Time{}.In(tZone.Location()) }), true, false},
		{"a time with a monotonic reading", poll(func(p *Poll) { p.NextAt = time.Now() }), true, false},
		{"years past 9999 and before 1", poll(func(p *Poll) {
			p.PushedAt, p.Started = time.Date(12026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-3, 1, 1, 0, 0, 0, 0, time.UTC)
		}), true, true}, // time.Parse takes four digits of year
		{"negative and large ints", poll(func(p *Poll) {
			p.PR, p.Iteration, p.ForgeErrors, p.ErrorsSince = -1, 1<<62, -5, 7
			p.FixAttempts = map[string]int{"x": -3}
		}), true, false},
		{"empty slices", poll(func(p *Poll) { p.Handled, p.Failing, p.FixAttempts = []string{}, []string{}, map[string]int{} }), true, false},
		{"empty strings in lists and keys", poll(func(p *Poll) {
			p.Handled, p.FixAttempts = []string{"", " "}, map[string]int{"": 1}
		}), true, false},
		{"natural key order", hooks("a10", "1", "a9", "2", "a", "3", "A", "4", "_", "5", "a09", "6", "a010", "7",
			"b", "8", "1", "9", "01", "10", "a-1", "11", "a.1", "12", "é", "13", "z", "14", "x1y", "15", "x1.", "16",
			"a10009", "17", "a199", "18", "a1-", "19", "a100", "20"), true, false},
		{"keys of long runs of digits", hooks("9909909999910999999", "", "99919a9a191", "", "1-999aa99999", ""), false, false},
		{"keys of digits not ASCII", hooks("٣٣", "", "1٣٣", "", "٣90", ""), false, false},
		{"keys not UTF-8", hooks("\xc3", "", "\xf9", "", "\ufffd", ""), false, false},
		{"a key of 128 bytes", hooks(strings.Repeat("k", 128), "v"), true, false},
		{"a key of 129 bytes", hooks(strings.Repeat("k", 129), "v"), false, false},
		{"a multi-line action", poll(func(p *Poll) { p.Log(tNano, "escalated: hook failed:\nline 2") }), false, false},
		{"invalid UTF-8", poll(func(p *Poll) { p.Status = "\xff" }), false, false},
		{"an emoji", poll(func(p *Poll) { p.Status = "done 🚀" }), false, false},
	}
	for _, s := range trickyStrings {
		// Left to yaml.v3: what is not one line of printable characters
		// (it escapes a character of four bytes, a BOM, C1 controls), a
		// key it writes "? key".
		fast := utf8.ValidString(s) && !strings.ContainsAny(s, "\t\n\r\x00\x07\x7f\ufeff\u2028\u0085🚀") &&
			!strings.HasPrefix(s, "\xed") && len(s) <= 128
		tests = append(tests, test{"string " + strconvQuote(s), trickyFile(s), fast, yamlLoses[s]})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeWatch(tt.w)
			require.NoError(t, err)
			if tt.w != nil && !keysOrdered(tt.w) {
				// yaml.v3 writes these keys in an order that depends
				// on the map's: one output is as good as another.
				assert.False(t, fast(tt.w))
				assertRoundTrip(t, tt.w, got)
				return
			}
			want, err := yaml.Marshal(tt.w)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			if tt.w != nil {
				assert.Equal(t, tt.fast, fast(tt.w), "written without yaml.v3")
			}
			if tt.w != nil && !tt.lost {
				assertRoundTrip(t, tt.w, got)
			}
		})
	}
}

// yamlLoses are the strings of trickyStrings that yaml.v3 does not read
// back as it wrote them, in some place of trickyFile: "<<" is a merge
// key, "\n" is written "|4+" and read back empty, and in a sequence a
// literal block's indentation hint (for a first line that is empty or
// starts with a space) is off by the "- ": " a\nb" is written "- |4-"
// with its lines 2 columns too far in, which does not parse.
var yamlLoses = map[string]bool{"<<": true, "\n": true, " a\nb": true, "\na": true}

func strconvQuote(s string) string {
	if len(s) > 20 {
		s = s[:20] + "..."
	}
	return "`" + strings.ToValidUTF8(s, "?") + "`"
}

// trickyFile holds s in every place a string goes.
func trickyFile(s string) *WatchFile {
	w := fullWatch()
	w.Hooks[s] = s
	w.Hooks["k"] = s
	p := w.Poll
	p.Stage, p.Head, p.FeedbackMark, p.ReviewMark, p.Status = s, s, s, s, s
	p.Handled = append(p.Handled, s)
	p.Noted = []string{s, s}
	p.Failing = append(p.Failing, s)
	p.FixAttempts[s] = 9
	p.Actions[3].What = s
	return w
}

// keysOrdered is whether yaml.v3 writes w's maps in one order, whatever
// the maps' own: whether its order of keys is total and transitive on
// each.
func keysOrdered(w *WatchFile) bool {
	var hk, fk []string
	for k := range w.Hooks {
		hk = append(hk, k)
	}
	if w.Poll != nil {
		for k := range w.Poll.FixAttempts {
			fk = append(fk, k)
		}
	}
	for _, keys := range [][]string{hk, fk} {
		for _, a := range keys {
			for _, b := range keys {
				if a != b && keyLess(a, b) == keyLess(b, a) {
					return false
				}
				for _, c := range keys {
					if keyLess(a, b) && keyLess(b, c) && !keyLess(a, c) {
						return false
					}
				}
			}
		}
	}
	return true
}

// fast is whether EncodeWatch writes w itself.
func fast(w *WatchFile) bool {
	e := watchEncoder{}
	e.file(w)
	return !e.slow
}

// assertRoundTrip checks that data, read as watch.yaml is, is w.
func assertRoundTrip(t *testing.T, w *WatchFile, data []byte) {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(data, &doc))
	back, err := DecodeWatch(&doc)
	require.NoError(t, err)
	assert.Equal(t, normal(w), normal(back))
}

// normal is w as a decoding gives it back: no nil hooks, no empty
// slices or maps, times in UTC without a monotonic reading.
func normal(w *WatchFile) *WatchFile {
	n := &WatchFile{Hooks: w.Hooks}
	if n.Hooks == nil {
		n.Hooks = map[string]string{}
	}
	if w.Poll == nil {
		return n
	}
	p := *w.Poll
	for _, t := range []*time.Time{&p.PushedAt, &p.Started, &p.NextAt, &p.PolledAt} {
		*t = t.UTC()
	}
	for _, l := range []*[]string{&p.Handled, &p.Noted, &p.Failing} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(p.FixAttempts) == 0 {
		p.FixAttempts = nil
	}
	p.Actions = nil
	for _, a := range w.Poll.Actions {
		p.Actions = append(p.Actions, Action{At: a.At.UTC(), What: a.What})
	}
	n.Poll = &p
	return n
}

// randTokens make random strings: the characters that decide a style, the
// words that read as another type, and plain text.
var randTokens = []string{
	"a", "b", "Z", "x", "é", "→", "日", "\u00a0", "0", "1", "9", " ", "  ", ".", "+", "_", "/",
	":", "#", "-", "'", `"`, "\\", "{", "}", "[", "]", ",", "&", "*", "!", "|", ">", "%", "@", "`", "?", "~",
	"yes", "no", "null", "true", "N", "1e3", "0x1F", "0b1", "0o7", ".inf", "-.INF", "2026-11-29",
	"2026-11-29T11:27:35Z", "1:20", "<<", "---", "...", "- ", ": ", " #", "ci.head", "8b72c82a5e26",
}

// unsafeTokens are what EncodeWatch leaves to yaml.v3.
var unsafeTokens = []string{"\n", "\t", "\r", "\x00", "\x7f", "\u0085", "\u2028", "\ufeff", "🚀", "\xff", "\xc3"}

type watchGen struct {
	r *rand.Rand
	// unsafe is the chance of a token of unsafeTokens.
	unsafe float64
}

func (g watchGen) str() string {
	var b strings.Builder
	for n := g.r.Intn(6); n > 0; n-- {
		if g.r.Float64() < g.unsafe {
			b.WriteString(unsafeTokens[g.r.Intn(len(unsafeTokens))])
		} else {
			b.WriteString(randTokens[g.r.Intn(len(randTokens))])
		}
	}
	return b.String()
}

func (g watchGen) strs() []string {
	var l []string
	for n := g.r.Intn(4); n > 0; n-- {
		l = append(l, g.str())
	}
	if l == nil && g.r.Intn(3) == 0 {
		l = []string{}
	}
	return l
}

func (g watchGen) int() int {
	return []int{0, 0, 1, 7, 150, -1, -42, 1 << 40, -1 << 63}[g.r.Intn(9)]
}

func (g watchGen) time() time.Time {
	zones := []*time.Location{time.UTC, tZone.Location(), time.FixedZone("", -8*3600), time.Local}
	switch g.r.Intn(5) {
	case 0:
		return time.Time{}
	case 1:
		return time.Now()
	}
	t := tNano.Add(time.Duration(g.r.Int63n(int64(24*365*time.Hour))) - 12*365*time.Hour)
	if g.r.Intn(2) == 0 {
		t = t.Truncate(time.Second)
	}
	return t.In(zones[g.r.Intn(len(zones))])
}

func (g watchGen) file() *WatchFile {
	w := &WatchFile{}
	if n := g.r.Intn(5); n > 0 || g.r.Intn(2) == 0 {
		w.Hooks = map[string]string{}
		for ; n > 0; n-- {
			w.Hooks[g.str()] = g.str()
		}
	}
	if g.r.Intn(5) == 0 {
		return w
	}
	p := &Poll{
		PR: g.int(), Stage: g.str(), Head: g.str(), PushedAt: g.time(), Started: g.time(),
		Iteration: g.int(), IntervalS: g.int(), NextAt: g.time(), Handled: g.strs(),
		FeedbackMark: g.str(), ReviewMark: g.str(), Noted: g.strs(), PolledAt: g.time(),
		ForgeErrors: g.int(), ErrorsSince: g.int(), Failing: g.strs(), Status: g.str(),
	}
	if n := g.r.Intn(4); n > 0 || g.r.Intn(2) == 0 {
		p.FixAttempts = map[string]int{}
		for ; n > 0; n-- {
			p.FixAttempts[g.str()] = g.int()
		}
	}
	if g.r.Intn(2) == 0 {
		p.Checks = &Checks{g.int(), g.int(), g.int(), g.int(), g.int()}
	}
	for n := g.r.Intn(4); n > 0; n-- {
		p.Actions = append(p.Actions, Action{At: g.time(), What: g.str()})
	}
	w.Poll = p
	return w
}

// assertSameAsYAML checks EncodeWatch(w) against yaml.Marshal(w), and
// that a file EncodeWatch wrote itself reads back as w; it reports
// whether EncodeWatch wrote w itself.
func assertSameAsYAML(t *testing.T, w *WatchFile) bool {
	t.Helper()
	got, err := EncodeWatch(w)
	require.NoError(t, err)
	isFast := fast(w)
	if keysOrdered(w) {
		want, err := yaml.Marshal(w)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%#v", w)
	}
	_, merge := w.Hooks["<<"]
	if w.Poll != nil {
		_, m := w.Poll.FixAttempts["<<"]
		merge = merge || m
	}
	if isFast && !merge {
		assertRoundTrip(t, w, got)
	}
	return isFast
}

func TestEncodeWatchRandomFiles(t *testing.T) {
	for _, tt := range []struct {
		name     string
		unsafe   float64
		n        int
		fastPart float64 // of the files, at least this part written without yaml.v3
	}{
		{"printable strings", 0, 3000, 0.9},
		{"some strings left to yaml.v3", 0.02, 3000, 0.2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := watchGen{r: rand.New(rand.NewSource(int64(len(tt.name)))), unsafe: tt.unsafe}
			fastN := 0
			for i := 0; i < tt.n; i++ {
				if assertSameAsYAML(t, g.file()) {
					fastN++
				}
			}
			assert.GreaterOrEqual(t, float64(fastN)/float64(tt.n), tt.fastPart)
		})
	}
}

func FuzzEncodeWatch(f *testing.F) {
	for i, s := range trickyStrings {
		f.Add(s, trickyStrings[(i+1)%len(trickyStrings)], "ok", int64(i))
	}
	f.Fuzz(func(t *testing.T, a, b, c string, seed int64) {
		g := watchGen{r: rand.New(rand.NewSource(seed))}
		w := g.file()
		if w.Poll == nil {
			w.Poll = &Poll{}
		}
		w.Hooks = map[string]string{a: b, b: c, "k": a}
		p := w.Poll
		p.Stage, p.Head, p.Status, p.ReviewMark = a, b, c, a+b
		p.Handled, p.Failing = []string{c, a}, []string{b}
		p.FixAttempts = map[string]int{c: 1, a + c: 2}
		p.Actions = append(p.Actions, Action{At: tNano, What: a}, Action{What: c})
		assertSameAsYAML(t, w)
	})
}

func BenchmarkEncodeWatch(b *testing.B) {
	benchWatch(b, EncodeWatch)
}

func BenchmarkMarshalWatch(b *testing.B) {
	benchWatch(b, func(w *WatchFile) ([]byte, error) { return yaml.Marshal(w) })
}

func benchWatch(b *testing.B, encode func(*WatchFile) ([]byte, error)) {
	for _, bb := range []struct {
		name string
		w    *WatchFile
	}{{"steady", steadyWatch()}, {"full", fullWatch()}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := encode(bb.w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

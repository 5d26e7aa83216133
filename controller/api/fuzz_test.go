package api_test

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/api"
)

// FuzzDecodeBounded decodes a request body made of any head followed by
// tail repeated, up to far past MaxRequestBytes, or without end. The
// decoder refuses what is oversize or not one request with an error,
// never a panic, and reads at most MaxRequestBytes+1 bytes whatever
// follows: what one request costs the controller is bounded
// (docs/SECURITY.md: the socket is the one door agents of another user
// have).
func FuzzDecodeBounded(f *testing.F) {
	for _, seed := range []struct {
		head, tail string
		n          uint32
	}{
		{`{"request_id":"`, "x", api.MaxRequestBytes},
		{`{"title":"x","vars":{"a":`, "[", 1 << 16},
		{`{"issue":3}`, " ", 1 << 17},
		{`{"vars":{`, `"k":1,`, 1 << 14},
		{`{"issue":3}`, `{"issue":3}`, 2},
		{"", "\x00", 0},
	} {
		f.Add(seed.head, seed.tail, seed.n, false)
		f.Add(seed.head, seed.tail, seed.n, true)
	}
	f.Fuzz(func(t *testing.T, head, tail string, n uint32, endless bool) {
		var body io.Reader = strings.NewReader(head + strings.Repeat(tail, int(min(n, 1<<20)/uint32(max(len(tail), 1)))))
		if endless && tail != "" {
			body = io.MultiReader(strings.NewReader(head), &repeat{s: tail})
		}
		counted := &counter{r: body}
		req := &api.CreateRequest{}
		err := api.Decode(counted, req)
		require.LessOrEqual(t, counted.n, int64(api.MaxRequestBytes+1), "read past the bound")
		if counted.n > api.MaxRequestBytes {
			require.Error(t, err, "an oversize request was accepted")
		}
	})
}

// repeat is s without end.
type repeat struct {
	s   string
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

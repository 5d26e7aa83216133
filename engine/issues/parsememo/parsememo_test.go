package parsememo

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

type parse struct{ names []string }

func (p *parse) Clone() *parse { return &parse{names: append([]string(nil), p.names...)} }

func TestMemo(t *testing.T) {
	var m Memo[*parse]
	_, ok := m.Take(1, []byte("a"))
	require.False(t, ok, "nothing kept")

	kept := &parse{names: []string{"x"}}
	m.Keep(1, []byte("a"), kept)
	got, ok := m.Take(1, []byte("a"))
	require.True(t, ok)
	require.Equal(t, kept, got)
	require.NotSame(t, kept, got, "a clone, never the parse kept")
	got.names[0] = "changed"
	require.Equal(t, "x", kept.names[0])

	_, ok = m.Take(1, []byte("b"))
	require.False(t, ok, "other bytes")
	_, ok = m.Take(2, []byte("a"))
	require.False(t, ok, "another issue")

	m.Keep(1, []byte("b"), &parse{names: []string{"y"}})
	_, ok = m.Take(1, []byte("a"))
	require.False(t, ok, "replaced")
	m.Forget(1)
	_, ok = m.Take(1, []byte("b"))
	require.False(t, ok, "forgotten")
}

func TestMemoFromManyGoroutines(t *testing.T) {
	var m Memo[*parse]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 200 {
				m.Keep(i%3, []byte{byte(i)}, &parse{})
				m.Take(i%3, []byte{byte(i)})
				m.Forget((i + 1) % 3)
			}
		})
	}
	wg.Wait()
}

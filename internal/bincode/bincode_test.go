package bincode_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/bincode"
)

type inner struct {
	Name  string
	Times []time.Time
}

type tree struct {
	B     bool
	I     int
	I8    int8
	U     uint32
	F     float64
	S     string
	P     *inner
	Nil   *inner
	Slice []string
	Empty []string
	None  []string
	Map   map[string]int
	EMap  map[string]int
	NoMap map[string]int
	Vars  map[string]any
	Kids  []*tree
	At    time.Time
}

func TestRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 28, 0, 2, 8, 5, time.UTC)
	zone := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600))
	tests := []struct {
		name string
		v    tree
	}{
		{name: "zero"},
		{name: "every kind", v: tree{
			B: true, I: -42, I8: -8, U: 7, F: 2.5, S: "ünïcödé",
			P:     &inner{Name: "x", Times: []time.Time{at, zone, {}}},
			Slice: []string{"a", "", "c"}, Empty: []string{},
			Map: map[string]int{"a": 1, "b": -2}, EMap: map[string]int{},
			Vars: map[string]any{"b": true, "f": false, "i": 3, "x": 1.5, "s": "v", "nil": nil},
			Kids: []*tree{{S: "kid", Kids: []*tree{nil, {I: 1}}}},
			At:   at,
		}},
	}
	c, err := bincode.New[tree]()
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := c.Marshal(&tt.v)
			require.NoError(t, err)
			var got tree
			require.NoError(t, c.Unmarshal(data, &got))
			assert.Equal(t, tt.v, got)
			assert.Equal(t, tt.v.Empty == nil, got.Empty == nil, "nil and empty slices stay apart")
			assert.Equal(t, tt.v.EMap == nil, got.EMap == nil, "nil and empty maps stay apart")
		})
	}
}

func TestDataOfAnotherShapeIsRefused(t *testing.T) {
	type v1 struct {
		ID    int
		Stage string
	}
	type v2 struct {
		ID    int
		Stage string
		Flow  string
	}
	type renamed struct {
		ID   int
		Step string
	}
	data, err := mustCodec[v1](t).Marshal(&v1{ID: 1, Stage: "a"})
	require.NoError(t, err)
	assert.ErrorIs(t, mustCodec[v2](t).Unmarshal(data, &v2{}), bincode.ErrShape, "a field added")
	assert.ErrorIs(t, mustCodec[renamed](t).Unmarshal(data, &renamed{}), bincode.ErrShape, "a field renamed")
	assert.ErrorIs(t, mustCodec[v1](t).Unmarshal([]byte("something else"), &v1{}), bincode.ErrShape)
}

func TestDamagedDataIsAnError(t *testing.T) {
	c := mustCodec[tree](t)
	data, err := c.Marshal(&tree{S: "a string long enough", Slice: []string{"x", "y"}, Map: map[string]int{"k": 1}})
	require.NoError(t, err)
	var got tree
	require.NoError(t, c.Unmarshal(data, &got))
	for n := len(data) - 1; n > 16; n-- {
		assert.ErrorIs(t, c.Unmarshal(data[:n], &tree{}), bincode.ErrData, "cut to %d bytes", n)
	}
	assert.ErrorIs(t, c.Unmarshal(append(data, 0), &tree{}), bincode.ErrData, "a byte too many")
}

func TestTypesItCannotEncode(t *testing.T) {
	type withChan struct{ C chan int }
	type withFunc struct{ F func() }
	type unexported struct{ x int }
	_, err := bincode.New[withChan]()
	assert.ErrorContains(t, err, "withChan.C")
	_, err = bincode.New[withFunc]()
	assert.Error(t, err)
	_, err = bincode.New[unexported]()
	assert.ErrorContains(t, err, "unexported")

	c := mustCodec[tree](t)
	_, err = c.Marshal(&tree{Vars: map[string]any{"list": []string{"a"}}})
	assert.ErrorContains(t, err, "[]string")
}

func mustCodec[T any](t *testing.T) *bincode.Codec[T] {
	t.Helper()
	c, err := bincode.New[T]()
	require.NoError(t, err)
	return c
}

package prbatch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
)

// stub is a forge whose PRs are given and which counts the checks asked
// of it.
type stub struct {
	forge.Forge
	prs    map[int]*forge.PR
	asked  int
	reruns int
	// read are the PRs asked for one by one.
	read []int
}

func (s *stub) PR(_ context.Context, number int) (*forge.PR, error) {
	s.read = append(s.read, number)
	c := *s.prs[number]
	return &c, nil
}

func (s *stub) PRs(_ context.Context, numbers []int) (map[int]*forge.PR, error) {
	out := map[int]*forge.PR{}
	for _, n := range numbers {
		if pr, ok := s.prs[n]; ok {
			c := *pr
			out[n] = &c
		}
	}
	return out, nil
}

func (s *stub) Checks(context.Context, string) ([]forge.Check, error) {
	s.asked++
	return []forge.Check{{Name: "from the forge"}}, nil
}

func (s *stub) Rerun(context.Context, []forge.Check) error { s.reruns++; return nil }

func (s *stub) Merge(context.Context, int, forge.MergeMethod, bool, string) error { return nil }

// A head's checks come from the batch while it holds a PR with that
// head, and from the forge once the batch no longer does: the PR dropped
// (a change), re-run, fetched again with another head, or a new tick.
func TestChecksComeFromTheBatchWhileItHoldsTheHead(t *testing.T) {
	ctx := context.Background()
	batched := []forge.Check{{Name: "test", SHA: "aaa"}}
	for _, tt := range []struct {
		name string
		// then changes the batch after PRs 1 and 2 (both at head aaa)
		// and 3 (bbb) were fetched.
		then      func(t *testing.T, f *Forge, s *stub)
		fromForge bool
	}{
		{"as fetched", func(*testing.T, *Forge, *stub) {}, false},
		{"one of two PRs at the head merged", func(t *testing.T, f *Forge, _ *stub) {
			require.NoError(t, f.Merge(ctx, 1, "", false, ""))
		}, false},
		{"both PRs at the head dropped", func(t *testing.T, f *Forge, _ *stub) {
			f.Forget(1)
			f.Forget(2)
		}, true},
		{"the head's checks re-run", func(t *testing.T, f *Forge, _ *stub) {
			require.NoError(t, f.Rerun(ctx, []forge.Check{{Name: "test", SHA: "aaa"}}))
		}, true},
		{"fetched again with other heads", func(t *testing.T, f *Forge, s *stub) {
			s.prs[1].HeadSHA, s.prs[2].HeadSHA = "ccc", "ccc"
			_, err := f.Fetch(ctx, []int{1, 2})
			require.NoError(t, err)
		}, true},
		{"a new tick", func(_ *testing.T, f *Forge, _ *stub) { f.Reset() }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &stub{prs: map[int]*forge.PR{
				1: {Number: 1, HeadSHA: "aaa", Checks: batched},
				2: {Number: 2, HeadSHA: "aaa", Checks: batched},
				3: {Number: 3, HeadSHA: "bbb", Checks: []forge.Check{{Name: "lint", SHA: "bbb"}}},
			}}
			f := &Forge{Inner: s}
			f.Reset()
			_, err := f.Fetch(ctx, []int{1, 2, 3})
			require.NoError(t, err)
			tt.then(t, f, s)
			got, err := f.Checks(ctx, "aaa")
			require.NoError(t, err)
			if tt.fromForge {
				assert.Equal(t, 1, s.asked)
				assert.Equal(t, "from the forge", got[0].Name)
			} else {
				assert.Zero(t, s.asked)
				assert.Equal(t, batched, got)
			}
			other, err := f.Checks(ctx, "bbb")
			require.NoError(t, err)
			if tt.name != "a new tick" {
				assert.Equal(t, "lint", other[0].Name, "another head's PR is kept")
			}
		})
	}
}

// Once the passes of a part are over, what its fetch brought is dropped
// (Drop): its PRs and their heads' checks come from the forge, another
// part's stay, and so does a PR another part fetched again since.
func TestDropLetsGoOfOneFetchOnly(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		// fetch fetches the parts and drops some; the first fetch was
		// of PRs 1 and 2 (head aaa).
		fetch func(t *testing.T, f *Forge)
		// fromForge are the PRs read from the forge, of 1, 2 and 3.
		fromForge []int
		// headFromForge: aaa's checks were asked of the forge.
		headFromForge bool
	}{
		{"nothing dropped", func(t *testing.T, f *Forge) {
			fetch(t, f, 1, 2)
			fetch(t, f, 3)
		}, nil, false},
		{"the first part dropped", func(t *testing.T, f *Forge) {
			first := fetch(t, f, 1, 2)
			fetch(t, f, 3)
			f.Drop(first)
		}, []int{1, 2}, true},
		{"the second part dropped", func(t *testing.T, f *Forge) {
			fetch(t, f, 1, 2)
			f.Drop(fetch(t, f, 3))
		}, []int{3}, false},
		{"the first part dropped after a later one fetched one of its PRs again", func(t *testing.T, f *Forge) {
			first := fetch(t, f, 1, 2)
			fetch(t, f, 1, 3)
			f.Drop(first)
		}, []int{2}, false},
		{"both dropped", func(t *testing.T, f *Forge) {
			first := fetch(t, f, 1, 2)
			f.Drop(fetch(t, f, 3))
			f.Drop(first)
		}, []int{1, 2, 3}, true},
		{"the tick over", func(t *testing.T, f *Forge) {
			fetch(t, f, 1, 2)
			fetch(t, f, 3)
			f.Reset()
		}, []int{1, 2, 3}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &stub{prs: map[int]*forge.PR{
				1: {Number: 1, HeadSHA: "aaa", Checks: []forge.Check{{Name: "test", SHA: "aaa"}}},
				2: {Number: 2, HeadSHA: "aaa", Checks: []forge.Check{{Name: "test", SHA: "aaa"}}},
				3: {Number: 3, HeadSHA: "bbb", Checks: []forge.Check{{Name: "lint", SHA: "bbb"}}},
			}}
			f := &Forge{Inner: s}
			f.Reset()
			tt.fetch(t, f)
			for n := 1; n <= 3; n++ {
				pr, err := f.PR(ctx, n)
				require.NoError(t, err)
				assert.Equal(t, n, pr.Number)
			}
			assert.Equal(t, tt.fromForge, s.read)
			_, err := f.Checks(ctx, "aaa")
			require.NoError(t, err)
			assert.Equal(t, tt.headFromForge, s.asked == 1)
		})
	}
}

// fetch fetches numbers into f, the fetch of a part.
func fetch(t *testing.T, f *Forge, numbers ...int) map[int]*forge.PR {
	t.Helper()
	prs, err := f.Fetch(context.Background(), numbers)
	require.NoError(t, err)
	return prs
}

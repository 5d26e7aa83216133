package githubtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLatestBy(t *testing.T) {
	type item struct{ key, v string }
	tests := []struct {
		name string
		in   []item
		want []item
	}{
		{"none", nil, nil},
		{"distinct keys keep their order", []item{{"a", "1"}, {"b", "2"}}, []item{{"a", "1"}, {"b", "2"}}},
		{"a later item replaces an earlier one in its place",
			[]item{{"a", "1"}, {"b", "2"}, {"a", "3"}, {"c", "4"}, {"b", "5"}},
			[]item{{"a", "3"}, {"b", "5"}, {"c", "4"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, latestBy(tt.in, func(it item) string { return it.key }))
		})
	}
}

func TestLatestOpinionatedReviews(t *testing.T) {
	p := &prState{PR: PR{Reviews: []Review{
		{Author: "ann", State: "CHANGES_REQUESTED"},
		{Author: "bob", State: "APPROVED", NoWriteAccess: true},
		{Author: "ann", State: "COMMENTED"},
		{Author: "cy", State: "APPROVED"},
		{Author: "ann", State: "APPROVED"},
	}}}
	authors := func(rs []Review) (out []string) {
		for _, r := range rs {
			out = append(out, r.Author+":"+r.State)
		}
		return out
	}
	assert.Equal(t, []string{"ann:APPROVED", "bob:APPROVED", "cy:APPROVED"}, authors(p.latestOpinionatedReviews(100, false)))
	assert.Equal(t, []string{"ann:APPROVED", "cy:APPROVED"}, authors(p.latestOpinionatedReviews(100, true)), "writers only")
	assert.Equal(t, []string{"ann:APPROVED"}, authors(p.latestOpinionatedReviews(1, true)), "first")
}

package records_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/forge/local/records"
)

func TestChanges(t *testing.T) {
	const logged = "number: 1\nstate: open\nupdated_at: 2026-01-01T00:00:00Z\n"
	for _, tt := range []struct {
		name          string
		logged, found string
		want          []string
	}{
		{"a field changed, one added", logged, "number: 1\nstate: merged\nupdated_at: 2026-01-01T00:00:00Z\napprovals:\n  - by: alice\n",
			[]string{"approvals added", "state: open → merged"}},
		{"times as written", logged, "number: 1\nstate: open\nupdated_at: 2026-01-02T00:00:00Z\n",
			[]string{"updated_at: 2026-01-01T00:00:00Z → 2026-01-02T00:00:00Z"}},
		{"only white space", logged, "number:   1\nstate: open\nupdated_at: 2026-01-01T00:00:00Z\n\n", nil},
		{"not a mapping", logged, "- a list\n", nil},
		{"nothing logged", "", "state: open\n", nil},
		{"removed", logged, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logged, found []byte
			if tt.logged != "" {
				logged = []byte(tt.logged)
			}
			if tt.found != "" {
				found = []byte(tt.found)
			}
			assert.Equal(t, tt.want, records.Changes(logged, found))
		})
	}
}

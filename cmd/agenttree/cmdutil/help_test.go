package cmdutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExitStatus(t *testing.T) {
	tests := []struct {
		lines []string
		want  string
	}{
		{[]string{"0 stopped, " + ExitUsageOrConfig}, "Exit status: 0 stopped, 2 bad usage or config."},
		{
			[]string{"0 repaired or nothing to repair, 1 nothing to restore from", ExitUsage + ", " + ExitOnlyPerson},
			"Exit status: 0 repaired or nothing to repair, 1 nothing to restore from,\n2 bad usage, 3 only a person can.",
		},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ExitStatus(tt.lines...))
	}
}

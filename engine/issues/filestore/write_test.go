package filestore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLineOffsetCountsLinesAsChainVerifyDoes(t *testing.T) {
	log := []byte("{\"a\":1}\n{\"b\":2}\n\n{\"torn\"")
	tests := []struct {
		name string
		line int
		want int64
	}{
		{"the first line starts the log", 1, 0},
		{"the second starts after the first's end", 2, 8},
		{"an empty line is a line", 3, 16},
		{"a torn last line starts after the last end", 4, 17},
		{"past the last line is the end", 9, int64(len(log))},
		{"zero is the start", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, lineOffset(log, tt.line))
		})
	}
}

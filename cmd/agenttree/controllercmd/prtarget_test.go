package controllercmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPROfURL(t *testing.T) {
	tests := []struct {
		arg  string
		want int
		ok   bool
	}{
		{"https://github.com/octo/app/pull/45", 45, true},
		{"https://github.example.com/octo/app/pull/45/files", 45, true},
		{"https://github.com/octo/app/pull/45#issuecomment-1", 45, true},
		{"http://github.com/octo/app/pull/7?w=1", 7, true},
		{"local:shop#3", 3, true},
		{"local:#3", 0, false},
		{"local:shop#03", 0, false},
		{"local:shop#3x", 0, false},
		{"https://github.com/octo/app/issues/45", 0, false},
		{"https://github.com/octo/app/pull/", 0, false},
		{"https://github.com//app/pull/4", 0, false},
		{"ftp://github.com/octo/app/pull/4", 0, false},
		{"45", 0, false},
		{"#45", 0, false},
	}
	for _, tt := range tests {
		got, ok := prOfURL(tt.arg)
		assert.Equal(t, tt.ok, ok, tt.arg)
		assert.Equal(t, tt.want, got, tt.arg)
	}
}

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `agenttree version` and `agenttree --version` say the same.
func TestVersionCommand(t *testing.T) {
	flag := invoke(t, humanEnv, "--version")
	require.Equal(t, 0, flag.code, flag.stderr)
	cmd := invoke(t, humanEnv, "version")
	require.Equal(t, 0, cmd.code, cmd.stderr)
	assert.Regexp(t, `^agenttree (v\d|devel)`, cmd.stdout)
	assert.Equal(t, flag.stdout, cmd.stdout)
}

package tokens_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
)

func TestSessionTokensAreStoredAsHashes(t *testing.T) {
	root := t.TempDir()
	s := tokens.Open(root)
	token, err := s.Mint(3, "developer")
	require.NoError(t, err)
	sess, err := s.Lookup(token)
	require.NoError(t, err)
	assert.Equal(t, 3, sess.Issue)
	assert.Equal(t, stages.Role("developer"), sess.Role)

	files, err := filepath.Glob(filepath.Join(root, "host", "sessions", "*"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.NotContains(t, files[0]+string(data), strings.TrimPrefix(token, "att_"), "the token itself is not on disk")

	for _, bad := range []string{"", "att_00", token + "x"} {
		_, err := s.Lookup(bad)
		assert.ErrorIs(t, err, tokens.ErrUnknown)
	}
	require.NoError(t, s.Revoke(token))
	_, err = s.Lookup(token)
	assert.ErrorIs(t, err, tokens.ErrUnknown)

	for _, role := range []stages.Role{"", "human", "controller", "manager"} {
		_, err := s.Mint(3, role)
		assert.Error(t, err, "role %q", role)
	}
}

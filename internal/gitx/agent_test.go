package gitx_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

// FetchUntrusted hands the serving of the fetch to the program it is
// given, each of its arguments whole, whatever the shell would read in
// it, and takes in only the refspec, with the hooks of the host's
// repository off.
func TestFetchUntrustedServesWithTheProgramGiven(t *testing.T) {
	gittest.Require(t)
	_, host := gittest.NewRemote(t)
	_, src := gittest.NewRemote(t)
	gittest.Run(t, src, "switch", "-q", "-c", "work")
	want := gittest.Commit(t, src, "b.txt", "agent's\n", "agent's work")
	gittest.Run(t, src, "switch", "-q", "-c", "other")
	gittest.Commit(t, src, "c.txt", "elsewhere\n", "on another branch")

	// The stand-in sandbox: it writes its arguments, then serves the
	// repository git names last with the host's upload-pack.
	dir := filepath.Join(t.TempDir(), "it's a $(box)")
	require.NoError(t, os.Mkdir(dir, 0o755))
	box := filepath.Join(dir, "box")
	require.NoError(t, os.WriteFile(box, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > \"${0%/*}/args\"\nfor last; do :; done\nexec git upload-pack \"$last\"\n"), 0o755))
	ran := filepath.Join(t.TempDir(), "hook-ran")
	hooks := filepath.Join(host, ".git", "hooks")
	require.NoError(t, os.WriteFile(filepath.Join(hooks, "reference-transaction"), []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755))

	uploadPack := []string{box, "--name", "a b", `"quoted" 'and' $HOME; rm -rf /`, ""}
	r := &gitx.Repo{Dir: host}
	require.NoError(t, r.FetchUntrusted(t.Context(), src, uploadPack, "+refs/heads/work:refs/heads/taken"))
	got, err := r.RevParse(t.Context(), "refs/heads/taken")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	args, err := os.ReadFile(filepath.Join(dir, "args"))
	require.NoError(t, err)
	assert.Equal(t, strings.Join(append(uploadPack[1:], src), "\n")+"\n", string(args), "each argument reached the program whole")
	assert.NoFileExists(t, ran, "no hook of the host's repository ran")

	err = r.FetchUntrusted(t.Context(), src, nil, "+HEAD:refs/heads/taken")
	assert.ErrorContains(t, err, "no upload-pack to serve it")
}

func TestParseStatus(t *testing.T) {
	assert.Equal(t, []string{"a.txt", "new name", "u.txt"}, gitx.ParseStatus(" M a.txt\x00R  new name\x00old name\x00?? u.txt\x00"))
	assert.Empty(t, gitx.ParseStatus(""))
}

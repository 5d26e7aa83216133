package identity_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/identity"
)

func TestPersonIsTheOwnerOrRootOutsideAContainer(t *testing.T) {
	for _, tt := range []struct {
		name  string
		p     identity.Process
		owner int
		want  bool
	}{
		{"the owner", identity.Process{UID: 1000}, 1000, true},
		{"root", identity.Process{UID: 0}, 1000, true},
		{"another user", identity.Process{UID: 1001}, 1000, false},
		{"the owner in a container", identity.Process{UID: 1000, Container: true}, 1000, false},
		{"root in a container", identity.Process{UID: 0, Container: true}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.p.Person(tt.owner)) })
	}
}

// A state directory not made yet is owned as the directory it will be in.
func TestOwnerOfAStateDirectoryNotMadeYet(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix owners")
	}
	dir := t.TempDir()
	owner, err := identity.Owner(filepath.Join(dir, "repo", "_agenttree"))
	require.NoError(t, err)
	assert.Equal(t, os.Getuid(), owner)
}

// Only a mount namespace other than the host's makes a container: a
// person's whole setup may run in one (CI does).
func TestSelfIsInAContainerOnlyInAnotherNamespace(t *testing.T) {
	ns := identity.Namespace()
	if ns == "" {
		t.Skip("mount namespaces are a Linux thing")
	}
	assert.False(t, identity.Self(ns).Container, "the host's namespace")
	assert.False(t, identity.Self("").Container, "no host recorded")
	other := identity.Self("mnt:[1]")
	assert.True(t, other.Container)
	assert.Contains(t, other.Why, "mnt:[1]")
}

package gittest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/internal/gittest"
)

func TestNewRemoteAndCommit(t *testing.T) {
	t.Parallel()
	bare, clone := gittest.NewRemote(t)
	assert.Equal(t, "main", gittest.Run(t, clone, "symbolic-ref", "--short", "HEAD"))
	assert.Equal(t, "one\ntwo\nthree", gittest.Run(t, bare, "show", "main:a.txt"))
	assert.Equal(t, "init", gittest.Run(t, bare, "log", "-1", "--format=%s", "main"))

	sha := gittest.Commit(t, clone, "b.txt", "b\n", "add b")
	assert.Len(t, sha, 40)
	assert.Equal(t, sha, gittest.Run(t, clone, "rev-parse", "main"))
	who := gittest.Name + " <" + gittest.Email + ">"
	assert.Equal(t, who+" "+who, gittest.Run(t, clone, "log", "-1", "--format=%an <%ae> %cn <%ce>"))
	assert.Equal(t, gittest.Run(t, clone, "rev-parse", "main~1"), gittest.Run(t, bare, "rev-parse", "main"), "Commit does not push")
}

func TestIsolate(t *testing.T) {
	gittest.Isolate(t)
	for _, kv := range gittest.Env() {
		k, v, _ := strings.Cut(kv, "=")
		assert.Equal(t, v, os.Getenv(k), k)
	}
}

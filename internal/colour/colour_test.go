package colour

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestColourOnlyWhereAPersonReads(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	var buf bytes.Buffer
	assert.Equal(t, "moved", For(&buf, env(nil)).Good("moved"), "not a terminal")
	assert.Equal(t, "moved", Painter{}.Good("moved"))
	assert.Equal(t, "\x1b[32mmoved\x1b[0m", On().Good("moved"))
	assert.Equal(t, "\x1b[31mescalated\x1b[0m", On().Bad("escalated"))
	assert.Equal(t, "", On().Warn(""), "nothing to paint")
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaCommand(t *testing.T) {
	r := invokeIn(t, t.TempDir(), humanEnv, "schema")
	require.Equal(t, 0, r.code, r.stderr)
	var schema map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &schema), "prints JSON")
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", schema["$schema"])
	committed, err := os.ReadFile(filepath.Join("..", "..", "docs", "agenttree.schema.json"))
	require.NoError(t, err)
	assert.Equal(t, string(committed), r.stdout, "prints the schema committed in docs/")

	r = invokeIn(t, t.TempDir(), humanEnv, "schema", "extra")
	assert.Equal(t, exitUsage, r.code)
}

package engine

import (
	"embed"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/hooks"
)

// defaultSkills are the instructions for an agent whose work came back
// for a failure; a repository overrides each with a file of the same name
// in _agenttree/skills/.
//
//go:embed skills/*.md
var defaultSkills embed.FS

// failureSkill is the skill file for a kind of failure, or "".
func failureSkill(class hooks.Class) string {
	switch class {
	case hooks.ClassCIFailed, hooks.ClassNoNewCI, hooks.ClassPollingTimeout:
		return "ci-failure.md"
	case hooks.ClassConflict:
		return "merge-conflict.md"
	}
	return ""
}

// skillFor is what an agent is told to do about a failure of class: the
// repository's _agenttree/skills/NAME, else agenttree's own.
func (e *Engine) skillFor(class hooks.Class) string {
	name := failureSkill(class)
	if name == "" {
		return ""
	}
	if data, err := os.ReadFile(filepath.Join(e.Store.Root(), "skills", name)); err == nil {
		return strings.TrimSpace(string(data))
	}
	data, err := defaultSkills.ReadFile("skills/" + name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// Package skills holds agenttree's default instructions ("skills"): the
// Markdown an agent or a person is shown on entering a stage of the
// starter pipeline, and what an agent is told when CI fails or its branch
// conflicts. The files in this directory are the one source: `agenttree
// init` writes them into a repository's _agenttree/skills/, where a team
// edits its own copy, and they read well on GitHub as they are.
package skills

import (
	"embed"
	"io/fs"
)

// The instructions for a failure, by the file name the engine looks for
// in a repository's _agenttree/skills/.
const (
	CIFailure     = "ci-failure.md"
	MergeConflict = "merge-conflict.md"
	// CIStalled: CI gave no verdict (it did not start, or did not finish
	// in time); nothing failed.
	CIStalled = "ci-stalled.md"
)

//go:embed *.md
var files embed.FS

// FS is the default instructions, one Markdown file each, at its root.
func FS() fs.FS { return files }

// Read is the default instructions file name.
func Read(name string) ([]byte, error) { return files.ReadFile(name) }

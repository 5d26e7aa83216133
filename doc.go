// Package agenttree is a workflow state-machine engine for AI coding
// agents. This root package holds no code; it documents the layout, and
// its test keeps the layers in docs/ARCHITECTURE.md §2 honest: every
// import runs down, from cmd to the leaves.
//
//	cmd/agenttree/...      the command line, one package per command group
//	controller, sessions   the host controller and its socket API; agents' sessions
//	engine/...             the only writer of issue state; the stage machine
//	hooks/...              gates and the work of stages, returning outcomes
//	forge/...              pull requests and CI: the local forge and GitHub
//	stages/...             .agenttree.yaml, read into one model
//	chain, internal/...    leaves: the hash chain, git, processes, files, text
package agenttree

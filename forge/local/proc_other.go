//go:build !unix

package local

import "os/exec"

// ownGroup: the runner shares its process group with its starter here,
// so it must signal only the CI shell.
const ownGroup = "0"

func detach(*exec.Cmd) {}

// processAlive cannot tell here; a lost runner is then noticed by its age.
func processAlive(int) bool { return true }

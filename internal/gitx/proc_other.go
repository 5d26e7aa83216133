//go:build !unix

package gitx

import "os/exec"

func killGroup(*exec.Cmd) {}

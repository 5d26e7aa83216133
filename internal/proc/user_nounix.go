//go:build !unix

package proc

import (
	"errors"
	"fmt"
	"os/exec"
)

func lookupUser(string) (User, error) {
	return User{}, fmt.Errorf("running commands as another user works on Unix only: %w", errors.ErrUnsupported)
}

func asUser(*exec.Cmd, User) error {
	return fmt.Errorf("running commands as another user works on Unix only: %w", errors.ErrUnsupported)
}

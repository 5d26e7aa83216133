package sessions

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/internal/statedir"
)

// handOver writes token to path for the agent that runs as u (nil: this
// process's user), readable by that user alone: mode 0400 from the
// moment the file exists, then given to u. The agent reads it through
// AGENTTREE_TOKEN_FILE (sessions/tokens.FromEnv).
func handOver(path, token string, u *proc.User) error {
	if err := os.MkdirAll(filepath.Dir(path), statedir.HostMode); err != nil {
		return fmt.Errorf("hand over the session token: %w", err)
	}
	if err := atomicfile.Write(path, []byte(token+"\n"), 0o400); err != nil {
		return fmt.Errorf("hand over the session token: %w", err)
	}
	if u == nil {
		return nil
	}
	if err := os.Lchown(path, int(u.UID), int(u.GID)); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("hand the session token over to %s: %w", u.Name, err)
	}
	return nil
}

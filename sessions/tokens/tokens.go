// Package tokens keeps the agents' session tokens: sessions mints one
// for each agent it starts and hands it over in a file; the controller's
// socket (controller/api) and an agent's own CLI look a token up to learn
// the one issue and role it acts for (docs/SECURITY.md).
package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/stages"
)

// Session is what an agent's token stands for: one issue, one role.
type Session struct {
	Issue   int         `yaml:"issue" json:"issue"`
	Role    stages.Role `yaml:"role" json:"role"`
	Created time.Time   `yaml:"created" json:"created"`
	// PID binds the token to a process tree: the agent's pane, which
	// `agenttree start` made. Only that process and its descendants act
	// with the token; a copy of it elsewhere (another session of the
	// same OS user read it) does not. 0: unbound (a token a person made
	// with `agenttree token`).
	PID int `yaml:"pid,omitempty" json:"pid,omitempty"`
	// Container: the session's agent runs in a container, whose
	// processes descend from no host process; the token file mounted
	// into that container alone binds it. Every other bound session's
	// token acts only for its pane's process tree, whatever mount
	// namespace the peer is in (one can make a namespace of one's own).
	Container bool `yaml:"container,omitempty" json:"container,omitempty"`
}

// TokenEnv and TokenFileEnv are how an agent's process holds its session
// token: the token itself (as a person hands it to an agent they start by
// hand), or the file it is in (as `agenttree start` hands it over, so it
// is in no process's environment).
const (
	TokenEnv     = "AGENTTREE_TOKEN"
	TokenFileEnv = "AGENTTREE_TOKEN_FILE"
)

// FromEnv is the session token the environment getenv reads holds,
// "" for none.
func FromEnv(getenv func(string) string) (string, error) {
	if token := getenv(TokenEnv); token != "" {
		return token, nil
	}
	path := getenv(TokenFileEnv)
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the session token (%s): %w", TokenFileEnv, err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("the session token file %s (%s) is empty", path, TokenFileEnv)
	}
	return token, nil
}

// ErrNotTheSession: a token used by a process outside the process tree it
// is bound to.
var ErrNotTheSession = errors.New("the session token is used outside its session")

// Admits says whether process pid may act with s's token: s is unbound
// or a container's, or pid is its pane's process or descends from it. A
// container's processes are not the host's descendants; the token file
// mounted into that container alone holds them to it.
func (s *Session) Admits(pid int) error {
	if s.PID == 0 || s.Container {
		return nil
	}
	ok, err := proc.Descends(pid, s.PID)
	if errors.Is(err, proc.ErrNoProcfs) {
		return nil // nothing to tell by; docs/SECURITY.md says where
	}
	if !ok {
		return fmt.Errorf("%w: process %d is not of the session of issue %d (its agent is process %d)", ErrNotTheSession, pid, s.Issue, s.PID)
	}
	return nil
}

// Bind binds the token whose Hash is hash to the process tree of pid, or,
// for an agent in a container, to that container (see Session.Container).
func (s *Store) Bind(hash string, pid int, container bool) error {
	path := filepath.Join(s.dir, hash+".yaml")
	var sess Session
	if err := atomicfile.ReadYAML(path, &sess); err != nil {
		return fmt.Errorf("bind the session token: %w", err)
	}
	sess.PID, sess.Container = pid, container
	if err := atomicfile.WriteYAML(path, sess, 0o644); err != nil {
		return fmt.Errorf("bind the session token: %w", err)
	}
	return nil
}

// ErrUnknown is returned for a token no session was given.
var ErrUnknown = errors.New("unknown session token")

// Store keeps the agents' session tokens in the host's part of the
// state directory. Only the token's hash is stored: reading the directory
// (everyone may) gives no token away.
type Store struct{ dir string }

// Open opens the session tokens of the state directory at root.
func Open(root string) *Store {
	return &Store{dir: statedir.Layout{Root: root}.Sessions()}
}

// Mint makes a new token for issue id in role. Only people and the
// controller can: the directory is the host's.
func (s *Store) Mint(id int, role stages.Role) (string, error) {
	if id <= 0 || !role.Agent() {
		return "", fmt.Errorf("a session token is for one issue and one agent role, not issue %d role %q", id, role)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := "att_" + hex.EncodeToString(raw)
	if err := os.MkdirAll(s.dir, statedir.HostMode); err != nil {
		return "", err
	}
	sess := Session{Issue: id, Role: role, Created: time.Now().UTC().Truncate(time.Second)}
	if err := atomicfile.WriteYAML(s.path(token), sess, 0o644); err != nil {
		return "", fmt.Errorf("record the session token: %w", err)
	}
	return token, nil
}

// Lookup finds the session of token.
func (s *Store) Lookup(token string) (*Session, error) {
	if token == "" {
		return nil, ErrUnknown
	}
	var sess Session
	err := atomicfile.ReadYAML(s.path(token), &sess)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrUnknown
	}
	if err != nil {
		return nil, err
	}
	return &sess, nil
}

// Revoke forgets token; a token already gone is no error.
func (s *Store) Revoke(token string) error { return s.RevokeHash(Hash(token)) }

// RevokeHash forgets the token whose Hash is hash: what a session record
// keeps, never the token itself.
func (s *Store) RevokeHash(hash string) error {
	if _, err := hex.DecodeString(hash); err != nil || len(hash) != 2*sha256.Size {
		return fmt.Errorf("not a session token's hash: %q", hash)
	}
	if err := os.Remove(filepath.Join(s.dir, hash+".yaml")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Hash is what identifies token on disk, its SHA-256 in hex.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func (s *Store) path(token string) string { return filepath.Join(s.dir, Hash(token)+".yaml") }

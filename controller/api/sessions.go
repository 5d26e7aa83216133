package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/stages"
)

// Session is what an agent's token stands for: one issue, one role.
type Session struct {
	Issue   int         `yaml:"issue" json:"issue"`
	Role    stages.Role `yaml:"role" json:"role"`
	Created time.Time   `yaml:"created" json:"created"`
}

// ErrUnknownToken is returned for a token no session was given.
var ErrUnknownToken = errors.New("unknown session token")

// Sessions keeps the agents' session tokens in the host's part of the
// state directory. Only the token's hash is stored: reading the directory
// (everyone may) gives no token away.
type Sessions struct{ dir string }

// OpenSessions opens the session tokens of the state directory at root.
func OpenSessions(root string) *Sessions {
	return &Sessions{dir: statedir.Layout{Root: root}.Sessions()}
}

// Mint makes a new token for issue id in role. Only people and the
// controller can: the directory is the host's.
func (s *Sessions) Mint(id int, role stages.Role) (string, error) {
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
func (s *Sessions) Lookup(token string) (*Session, error) {
	if token == "" {
		return nil, ErrUnknownToken
	}
	var sess Session
	err := atomicfile.ReadYAML(s.path(token), &sess)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrUnknownToken
	}
	if err != nil {
		return nil, err
	}
	return &sess, nil
}

// Revoke forgets token; a token already gone is no error.
func (s *Sessions) Revoke(token string) error { return s.RevokeHash(Hash(token)) }

// RevokeHash forgets the token whose Hash is hash: what a session record
// keeps, never the token itself.
func (s *Sessions) RevokeHash(hash string) error {
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

func (s *Sessions) path(token string) string { return filepath.Join(s.dir, Hash(token)+".yaml") }

package stages

import (
	"fmt"
	"os"
	"path/filepath"
)

// FileName is the config file agenttree looks for.
const FileName = ".agenttree.yaml"

// NotFoundError says that Find found no config, and where it stopped.
type NotFoundError struct {
	Dir  string // where the search started
	Repo string // the root of the git work tree it stopped at; "" when outside one
}

func (e *NotFoundError) Error() string {
	if e.Repo == "" {
		return fmt.Sprintf("no %s in %s or any parent directory, which is in no git repository; "+
			"run `agenttree init` in your repository to create one, or pass --config PATH", FileName, e.Dir)
	}
	return fmt.Sprintf("no %s in the git repository at %s (looked from %s up to its root); "+
		"run `agenttree init` there to create one, or pass --config PATH", FileName, e.Repo, e.Dir)
}

// Find walks up from dir to the nearest .agenttree.yaml, stopping at the
// root of the git work tree dir is in: a repository's pipeline is its own,
// never one that happens to lie in a directory above it.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, FileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return "", &NotFoundError{Dir: abs, Repo: d}
		}
		if filepath.Dir(d) == d {
			return "", &NotFoundError{Dir: abs}
		}
	}
}

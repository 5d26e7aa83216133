package stages

import (
	"fmt"
	"os"
	"path/filepath"
)

// FileName is the config file agenttree looks for.
const FileName = ".agenttree.yaml"

// Find walks up from dir to the nearest .agenttree.yaml.
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
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s in %s or any parent directory; run `agenttree init` to create one, or pass --config PATH", FileName, abs)
		}
	}
}

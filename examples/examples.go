// Package examples holds the example pipelines a team copies: each
// directory is one, with its .agenttree.yaml and a README.md saying what it
// is for. They are embedded, so `agenttree init --template NAME` writes one,
// and examples_test.go drives an issue through each on the local forge
// with the controller, so an example that rots fails the build.
package examples

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

//go:embed */.agenttree.yaml */README.md
var files embed.FS

// ErrUnknown is an example name no directory has.
var ErrUnknown = errors.New("unknown example")

// configFile is the file name of a pipeline (stages.FileName; not imported,
// so that embedding the examples costs no config loader).
const configFile = ".agenttree.yaml"

// Names are the examples, sorted: the names of their directories.
func Names() []string {
	// The embedded tree is fixed at build time: reading its root cannot fail.
	entries, _ := fs.ReadDir(files, ".")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// Config is example name's .agenttree.yaml. An unknown name is ErrUnknown,
// with the names there are.
func Config(name string) ([]byte, error) {
	data, err := files.ReadFile(path.Join(name, configFile))
	if err != nil || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("%w %q; the examples are: %s", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	return data, nil
}

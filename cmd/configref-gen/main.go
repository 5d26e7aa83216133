// Command configref-gen writes the generated reference of .agenttree.yaml:
// agenttree.schema.json and CONFIG.md, into the directory -out.
//
//	go generate ./stages/configref
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/stages/configref"
)

func main() {
	out := flag.String("out", "docs", "the directory to write the reference into")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "configref-gen:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	reg := builtin.Registry()
	schema, err := configref.JSONSchema(reg)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		configref.SchemaFile:   schema,
		configref.MarkdownFile: configref.Markdown(reg),
	}
	for name, data := range files {
		if err := atomicfile.Write(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// Command parsers is a floor for `agenttree next`: the cobra CLI of
// bench/floors/cobra with the parsers reading a config and its gates
// need linked (YAML, the condition language, Markdown), initialised and
// unused.
package main

import (
	_ "github.com/expr-lang/expr"
	_ "github.com/yuin/goldmark/parser" // as hooks/docs links it: no HTML renderer
	_ "gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/bench/floors/internal/hello"
)

func main() { hello.Run() }

package load_test

import (
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
)

// catalog is the set of hooks the tests load configs against: the real one.
func catalog() stages.HookCatalog { return builtin.Registry() }

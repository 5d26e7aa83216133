// Command cobra is a floor for `agenttree --help`: a cobra CLI of the
// same shape that links nothing else. (pflag imports net, so by default
// it is linked dynamically, as agenttree is.)
package main

import "github.com/agenttree/agenttree/bench/floors/internal/hello"

func main() { hello.Run() }

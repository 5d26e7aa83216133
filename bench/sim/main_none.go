//go:build !etcd

// Command sim is the internet-scale simulation (bench/README.md, "The
// simulation"). It runs controllers, nodes and agents over an embedded
// etcd, so it is built only with etcd's client: `go run -tags etcd
// ./bench/sim`.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "bench/sim needs etcd's client: run it as `go run -tags etcd ./bench/sim [flags]` (bench/README.md, \"The simulation\")")
	os.Exit(2)
}

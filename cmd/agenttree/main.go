// Command agenttree moves issues through the pipeline a repository declares
// in .agenttree.yaml.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	wd, err := os.Getwd()
	if err != nil {
		os.Stderr.WriteString("error: the current directory cannot be read: " + err.Error() + "\n")
		os.Exit(2)
	}
	code := run(ctx, wd, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

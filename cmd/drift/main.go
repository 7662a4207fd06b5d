// Command drift shows what a change to a GitOps repository would do to a cluster.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/drift-gitops/drift/internal/cli"
)

// main runs drift, or one of its helper processes, and exits with its status.
func main() {
	if code, ok := subprocessMain(); ok {
		os.Exit(code)
	}
	// client-go logs retries and discovery failures through klog; drift reports errors
	// itself, once, in its own words.
	klog.SetLogger(logr.Discard())
	// The first SIGINT or SIGTERM ends the run, which still writes and publishes the
	// report of what it finished; a second one ends drift at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	stopProfiling := cli.StartProfiling()
	code := run(ctx, genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	stopProfiling()
	stop()
	os.Exit(code)
}

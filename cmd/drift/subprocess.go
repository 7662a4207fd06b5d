package main

import (
	"fmt"
	"os"

	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/render/worker"
	"github.com/drift-gitops/drift/internal/subprocess"
)

// subprocessMain runs drift's own helper processes (internal/subprocess); ok is false
// for drift itself.
func subprocessMain() (code int, ok bool) {
	switch role := subprocess.Role(); role {
	case "":
		return 0, false
	case subprocess.RoleRender:
		return worker.Main(os.Stdin, os.Stdout, os.Stderr), true
	case subprocess.RoleReaper:
		return ephemeral.ReaperMain(os.Args[1:]), true
	default:
		fmt.Fprintf(os.Stderr, "drift: unknown %s role %q\n", subprocess.Env, role)
		return 2, true
	}
}

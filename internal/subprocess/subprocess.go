// Package subprocess runs drift's own helper processes: the drift binary executed
// again with a role named in its environment. Work that must not take drift down with
// it (rendering a target under limits) or that must outlive nothing (the guardian of
// an ephemeral control plane) runs this way. It also holds what the operating system
// does for such a process: a memory limit it sets on itself (LimitMemory), dying with
// drift (DieWithParent), and how it ended (MaxRSS, KilledBy).
package subprocess

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Env names the role a re-executed drift plays; drift's main reads it first.
const Env = "DRIFT_SUBPROCESS"

// Roles.
const (
	// RoleRender renders one target and writes the result to stdout.
	RoleRender = "render"
	// RoleReaper runs a control-plane binary and kills it when drift goes away.
	RoleReaper = "reaper"
)

// Command returns drift itself, to be run in role with args.
func Command(ctx context.Context, role string, args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("failed to find drift's own executable to start its %s process: %w", role, err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), Env+"="+role)
	return cmd, nil
}

// Role is the role this process was started in, "" for drift itself.
func Role() string { return os.Getenv(Env) }

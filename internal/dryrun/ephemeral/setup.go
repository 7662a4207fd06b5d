package ephemeral

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// installScript installs etcd (Debian's etcd-server) and builds kube-apiserver from the
// Go module proxy into the cache; the test script runs the same file.
//
//go:embed install.sh
var installScript string

// Setup installs the binaries the ephemeral server needs into the cache directory,
// where they are missing, and returns the directory. Progress goes to progress.
func Setup(ctx context.Context, env []string, progress io.Writer) (string, error) {
	if _, err := exec.LookPath("bash"); err != nil {
		return "", fmt.Errorf("drift setup needs bash: %w", err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("drift setup builds kube-apiserver with Go, and go is not on PATH: install Go 1.26, or set %s to a directory with etcd and kube-apiserver", AssetsEnv)
	}
	cmd := exec.CommandContext(ctx, "bash", "-s")
	cmd.Stdin = strings.NewReader(installScript)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("installing etcd and kube-apiserver failed (see the messages above): %w", err)
	}
	return strings.TrimSpace(out.String()), nil
}

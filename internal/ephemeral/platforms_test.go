package ephemeral

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReleasePlatformsBuild guards what the snapshot's Windows build found, without
// cross-compiling (minutes): controller-runtime v0.25.2's envtest process package does
// not compile for Windows, so drift's binary (cmd/drift) for Windows must not import it;
// every platform of .goreleaser.yaml must load.
func TestReleasePlatformsBuild(t *testing.T) {
	const broken = "sigs.k8s.io/controller-runtime/pkg/internal/testing/process"
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", "../../cmd/drift")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=arm64", "CGO_ENABLED=0", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list for %s: %v\n%s", goos, err, out)
		}
		deps := strings.Fields(string(out))
		has := false
		for _, d := range deps {
			has = has || d == broken
		}
		if want := goos != "windows"; has != want {
			t.Errorf("drift for %s imports %s: %t, want %t", goos, broken, has, want)
		}
	}
}

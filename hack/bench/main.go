// Command bench measures drift diff beside kubectl diff on the same 1,000 objects.
//
// It generates a repository (ConfigMaps, Deployments, Services, Secrets and
// ServiceAccounts over 10 namespaces), loads its base commit into a local API server
// with server-side apply (field manager kubectl), then times, on the head commit (10% of
// the objects modified, 5% new):
//
//	drift diff                                (in-process diff, --concurrency 16)
//	kubectl diff --server-side                (sequential)
//	kubectl diff --server-side --concurrency=32
//	drift diff --cluster ephemeral --base     (start-to-report, server start included)
//
// and prints the median wall time and peak memory (max RSS) of each over -runs runs.
// Run it with make bench (which sets KUBEBUILDER_ASSETS and builds bin/drift).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/dryrun/ephemeral"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

func main() {
	runs := flag.Int("runs", 3, "runs of each command; the median is printed")
	drift := flag.String("drift", "bin/drift", "the drift binary to measure")
	flag.Parse()
	if err := bench(*drift, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func bench(drift string, runs int) error {
	work, err := os.MkdirTemp("", "drift-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	repoDir := filepath.Join(work, "repo")
	counts, err := generate(repoDir)
	if err != nil {
		return err
	}
	fmt.Printf("repository: %d objects at head (%d unchanged, %d modified, %d new) over %d namespaces\n",
		counts.total, counts.total-counts.modified-counts.added, counts.modified, counts.added, namespaces)

	assets, err := ephemeral.AssetsDir(os.Getenv)
	if err != nil {
		return err
	}
	srv, err := ephemeral.Start(context.Background(), assets)
	if err != nil {
		return err
	}
	defer srv.Stop()
	stopOnSignal(srv, work)
	kubeconfig := filepath.Join(work, "kubeconfig")
	if err := writeKubeconfig(srv, kubeconfig); err != nil {
		return err
	}
	if err := loadBase(srv, repoDir); err != nil {
		return err
	}

	driftArgs := []string{"diff", "--repo", repoDir, "--ref", "main", "--kubeconfig", kubeconfig, "-o", "json", "--out", filepath.Join(work, "report.json")}
	kubectlArgs := []string{"diff", "--server-side", "-R", "-f", filepath.Join(repoDir, "apps"), "--kubeconfig", kubeconfig}
	cases := []struct {
		name string
		cmd  []string
	}{
		{"drift diff (--concurrency 16)", append([]string{drift}, driftArgs...)},
		{"kubectl diff --server-side", append([]string{"kubectl"}, kubectlArgs...)},
		{"kubectl diff --server-side --concurrency=32", append([]string{"kubectl"}, append(kubectlArgs, "--concurrency=32")...)},
		{"drift diff --cluster ephemeral --base base", []string{drift, "diff", "--repo", repoDir, "--ref", "main", "--cluster", "ephemeral", "--base", "base", "-o", "json", "--out", filepath.Join(work, "eph.json")}},
	}
	fmt.Printf("\n%-48s %12s %12s %10s\n", "command", "median wall", "peak RSS", "changed")
	var baseline, driftTime time.Duration
	for _, c := range cases {
		var walls []time.Duration
		var rss int64
		changed := ""
		for i := 0; i < runs; i++ {
			wall, maxRSS, out, err := measure(c.cmd)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			walls = append(walls, wall)
			rss = max(rss, maxRSS)
			changed = countChanged(c.cmd[0], out, work)
		}
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		med := walls[len(walls)/2]
		fmt.Printf("%-48s %11.2fs %9.0f MiB %10s\n", c.name, med.Seconds(), float64(rss)/1024, changed)
		switch c.name {
		case "drift diff (--concurrency 16)":
			driftTime = med
		case "kubectl diff --server-side":
			baseline = med
		}
	}
	fmt.Printf("\ndrift diff is %.1fx faster than kubectl diff --server-side (goal: at least 3x)\n", baseline.Seconds()/driftTime.Seconds())
	return nil
}

// stopOnSignal stops the server and removes the work directory on Ctrl-C or SIGTERM.
func stopOnSignal(srv *ephemeral.Server, work string) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		_ = srv.Stop()
		_ = os.RemoveAll(work)
		os.Exit(130)
	}()
}

// measure runs a command and returns its wall time, peak RSS (KiB) and stdout. Exit
// status 1 (changes found) is success for both tools.
func measure(argv []string) (time.Duration, int64, string, error) {
	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
	var out strings.Builder
	cmd.Stdout = &out
	var errOut strings.Builder
	cmd.Stderr = &errOut
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		return 0, 0, "", fmt.Errorf("%v: %s", err, errOut.String())
	}
	return wall, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, out.String(), nil
}

var kubectlFile = regexp.MustCompile(`(?m)^diff -u -N `)

// countChanged reads how many objects each tool found changed, to check they agree.
func countChanged(tool, out, work string) string {
	if tool == "kubectl" {
		return fmt.Sprint(len(kubectlFile.FindAllString(out, -1)))
	}
	for _, f := range []string{"report.json", "eph.json"} {
		data, err := os.ReadFile(filepath.Join(work, f))
		if err != nil {
			continue
		}
		s := string(data)
		n := strings.Count(s, `"category": "add"`) + strings.Count(s, `"category": "modify"`)
		_ = os.Remove(filepath.Join(work, f))
		return fmt.Sprint(n)
	}
	return "?"
}

func writeKubeconfig(srv *ephemeral.Server, path string) error {
	c := srv.Config
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos["bench"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, Token: c.BearerToken}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	cfg.CurrentContext = "bench"
	return clientcmd.WriteToFile(*cfg, path)
}

// loadBase applies the base commit for real, as kubectl apply --server-side would.
func loadBase(srv *ephemeral.Server, repoDir string) error {
	repo, err := source.Open(repoDir)
	if err != nil {
		return err
	}
	snap, err := repo.Snapshot("base")
	if err != nil {
		return err
	}
	res, err := render.Plain(snap.FS, render.Options{})
	if err != nil {
		return err
	}
	clients, err := dryrun.NewClients(srv.Config, 16)
	if err != nil {
		return err
	}
	if failed := dryrun.Seed(context.Background(), clients, res.Objects, dryrun.Options{}); len(failed) > 0 {
		return fmt.Errorf("loading the base: %d objects failed, first: %s", len(failed), failed[0].Err.Message)
	}
	return nil
}

// Command bench measures drift diff beside kubectl diff and a bare client's floor on the
// same generated objects.
//
// For each scenario it generates a repository (ConfigMaps, Deployments, Services,
// Secrets and ServiceAccounts over 10 namespaces), loads its base commit into a local
// API server with concurrent server-side applies (field manager kubectl), then runs,
// on the head commit (10% of the objects modified, 5% new):
//
//	drift diff                                  (its defaults)
//	kubectl diff --server-side --concurrency=32
//	floor: GET + dry-run apply                  (a bare client-go client, 32 workers)
//	floor: dry-run apply only
//
// and, for the first scenario only, kubectl diff --server-side (sequential) and drift
// diff --cluster ephemeral --base (start-to-report, server start included). It prints
// the median wall time, the client's CPU time (user + system) and its peak memory
// (max RSS) of each over -runs runs, and drift's ratios to the others.
//
// Scenarios: 1k (1,000 objects on loopback), 10k (10,000 on loopback), 1k-20ms (1,000
// through a proxy adding 20 ms to every round trip, a cluster far away).
//
// Run it with make bench (which sets KUBEBUILDER_ASSETS and builds bin/drift). The
// floor client is this program again: bench -floor get+apply|apply-only ....
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
	"github.com/drift-gitops/drift/internal/subprocess"
)

func main() {
	if subprocess.Role() == subprocess.RoleReaper {
		// The ephemeral server's guardian is this program run again (see
		// internal/subprocess).
		os.Exit(ephemeral.ReaperMain(os.Args[1:]))
	}
	runs := flag.Int("runs", 3, "runs of each command; the median is printed")
	drift := flag.String("drift", "bin/drift", "the drift binary to measure")
	scenarios := flag.String("scenarios", "1k,10k,1k-20ms", "comma-separated scenarios to run: 1k, 10k, 1k-20ms")
	floorMode := flag.String("floor", "", "run as the floor client: get+apply or apply-only (with -floor-kubeconfig, -repo, -ref)")
	kubeconfig := flag.String("floor-kubeconfig", "", "floor client: the cluster")
	repo := flag.String("repo", "", "floor client: the repository")
	ref := flag.String("ref", "main", "floor client: the ref to preview")
	only := flag.String("commands", "", "comma-separated commands to run (default all): drift, kubectl32, floor, apply, kubectl, ephemeral")
	launcher := flag.Bool("launch", false, "run as the launcher of the command after --, reporting its usage on fd 3 (see launch.go)")
	flag.Parse()
	if *launcher {
		os.Exit(launch(flag.Args()))
	}
	var err error
	if *floorMode != "" {
		err = floor(*floorMode == "get+apply", *kubeconfig, *repo, *ref)
	} else {
		err = benchAll(*drift, *runs, strings.Split(*scenarios, ","), *only)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// scenario is one repository size and one distance to the API server.
type scenario struct {
	name    string
	perKind int           // objects per namespace and kind: 10 namespaces x 5 kinds
	delay   time.Duration // added each way by the latency proxy
	extras  bool          // also sequential kubectl and drift --cluster ephemeral
}

var known = map[string]scenario{
	"1k":      {name: "1,000 objects, loopback", perKind: 20, extras: true},
	"10k":     {name: "10,000 objects, loopback", perKind: 200},
	"1k-20ms": {name: "1,000 objects, 20 ms round trip", perKind: 20, delay: 10 * time.Millisecond},
}

func benchAll(drift string, runs int, names []string, only string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, n := range names {
		sc, ok := known[strings.TrimSpace(n)]
		if !ok {
			return fmt.Errorf("unknown scenario %q: use 1k, 10k or 1k-20ms", n)
		}
		if err := bench(self, drift, runs, sc, only); err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	return nil
}

// figures are one command's medians.
type figures struct {
	wall, cpu time.Duration
	rssKiB    int64
	changed   string
}

func bench(self, drift string, runs int, sc scenario, only string) error {
	work, err := os.MkdirTemp("", "drift-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	repoDir := filepath.Join(work, "repo")
	counts, err := generate(repoDir, sc.perKind)
	if err != nil {
		return err
	}
	fmt.Printf("\n== %s: %d objects at head (%d unchanged, %d modified, %d new) over %d namespaces\n",
		sc.name, counts.total, counts.total-counts.modified-counts.added, counts.modified, counts.added, namespaces)

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
	start := time.Now()
	if err := loadBase(srv, repoDir); err != nil {
		return err
	}
	fmt.Printf("base loaded in %.1fs\n", time.Since(start).Seconds())
	host := srv.Config.Host
	if sc.delay > 0 {
		u, err := url.Parse(host)
		if err != nil {
			return err
		}
		proxy, err := startLatencyProxy(u.Host, sc.delay)
		if err != nil {
			return err
		}
		defer proxy.Close()
		host = "https://" + proxy.Addr()
	}
	kubeconfig := filepath.Join(work, "kubeconfig")
	if err := writeKubeconfig(srv, host, kubeconfig); err != nil {
		return err
	}

	driftArgs := []string{"diff", "--repo", repoDir, "--ref", "main", "--kubeconfig", kubeconfig, "-o", "json", "--out", filepath.Join(work, "report.json")}
	kubectlArgs := []string{"diff", "--server-side", "-R", "-f", filepath.Join(repoDir, "apps"), "--kubeconfig", kubeconfig}
	floorArgs := []string{"-floor-kubeconfig", kubeconfig, "-repo", repoDir, "-ref", "main"}
	type command struct {
		name, key string
		argv      []string
	}
	cmds := []command{
		{"drift diff", "drift", append([]string{drift}, driftArgs...)},
		{"kubectl diff --server-side --concurrency=32", "kubectl32", append([]string{"kubectl"}, append(kubectlArgs, "--concurrency=32")...)},
		{"floor: GET + dry-run apply", "floor", append([]string{self, "-floor", "get+apply"}, floorArgs...)},
		{"floor: dry-run apply only", "apply", append([]string{self, "-floor", "apply-only"}, floorArgs...)},
	}
	if sc.extras {
		cmds = append(cmds,
			command{"kubectl diff --server-side", "kubectl", append([]string{"kubectl"}, kubectlArgs...)},
			command{"drift diff --cluster ephemeral --base base", "ephemeral", []string{drift, "diff", "--repo", repoDir, "--ref", "main", "--cluster", "ephemeral", "--base", "base", "-o", "json", "--out", filepath.Join(work, "eph.json")}})
	}
	fmt.Printf("%-46s %11s %11s %10s %8s\n", "command", "median wall", "client CPU", "peak RSS", "changed")
	got := map[string]figures{}
	for _, c := range cmds {
		if only != "" && !slices.Contains(strings.Split(only, ","), c.key) {
			continue
		}
		var walls, cpus []time.Duration
		f := figures{}
		for i := 0; i < runs; i++ {
			wall, cpu, rss, out, err := measure(c.argv)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			walls, cpus = append(walls, wall), append(cpus, cpu)
			f.rssKiB = max(f.rssKiB, rss)
			f.changed = countChanged(c.key, out, work)
		}
		f.wall, f.cpu = median(walls), median(cpus)
		got[c.key] = f
		fmt.Printf("%-46s %10.2fs %10.2fs %6.0f MiB %8s\n", c.name, f.wall.Seconds(), f.cpu.Seconds(), float64(f.rssKiB)/1024, f.changed)
	}
	d := got["drift"]
	if d.wall == 0 || got["kubectl32"].wall == 0 || got["floor"].wall == 0 || got["apply"].wall == 0 {
		return nil // ratios need all four
	}
	fmt.Printf("drift's wall time: %.2fx kubectl diff --concurrency=32's, %.2fx the GET + apply floor's, %.2fx the apply-only floor's\n",
		d.wall.Seconds()/got["kubectl32"].wall.Seconds(), d.wall.Seconds()/got["floor"].wall.Seconds(), d.wall.Seconds()/got["apply"].wall.Seconds())
	return nil
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
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

var kubectlFile = regexp.MustCompile(`(?m)^diff -u -N `)

// countChanged reads how many objects each tool found changed, to check they agree.
func countChanged(key, out, work string) string {
	switch key {
	case "kubectl", "kubectl32":
		return fmt.Sprint(len(kubectlFile.FindAllString(out, -1)))
	case "floor", "apply":
		return "-"
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

func writeKubeconfig(srv *ephemeral.Server, host, path string) error {
	c := srv.Config
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: c.CAData, TLSServerName: c.ServerName}
	cfg.AuthInfos["bench"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, Token: c.BearerToken}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	cfg.CurrentContext = "bench"
	return clientcmd.WriteToFile(*cfg, path)
}

// loadBase applies the base commit for real, as kubectl apply --server-side would, from
// concurrent workers.
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
	clients, err := kube.NewClients(srv.Config, 32)
	if err != nil {
		return err
	}
	if failed := ephemeral.Seed(context.Background(), clients, res.Objects, dryrun.Options{Applier: kubectlssa.New(), Concurrency: 32}); len(failed) > 0 {
		return fmt.Errorf("loading the base: %d objects failed, first: %s", len(failed), failed[0].Err.Message)
	}
	return nil
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

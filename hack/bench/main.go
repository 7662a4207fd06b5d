// Command bench measures drift diff beside kubectl diff and a bare client's floor on the
// same generated objects.
//
// For each scenario it generates a repository (ConfigMaps, Deployments, Services,
// Secrets and ServiceAccounts over 10 namespaces), loads its base commit into a local
// API server with concurrent server-side applies (field manager kubectl), then runs,
// on the head commit (10% of the objects modified, 5% new):
//
//	drift diff, cold                            (its defaults, an empty dry-run cache)
//	drift diff, repeat                          (the cache of a run before, nothing changed)
//	drift diff, repeat after 1% changed live    (1% of the objects edited in the cluster)
//	kubectl diff --server-side --concurrency=32
//	floor: GET + dry-run apply                  (a bare client-go client, 32 workers)
//	floor: dry-run apply only
//
// and, on loopback, drift diff --cluster ephemeral --base (start-to-report, server start
// included, from an empty cache) and, for 1k only, kubectl diff --server-side
// (sequential). It prints the median wall time, the client's CPU time (user + system)
// and its peak memory (max RSS) of each over -runs runs, and drift's ratios to the
// others; at the end, each goal of docs/performance.md the scenarios run measure, as
// met or not (goals.go).
//
// Every cold run of drift starts from an empty cache directory of its own, every run.
//
// Scenarios: 1k (1,000 objects on loopback), 10k (10,000 on loopback), 1k-20ms (1,000
// through a proxy adding 20 ms to every round trip, a cluster far away), 10k-20ms;
// and fleet: drift targets over a 1,000-Application fleet (an ApplicationSet's
// matrix of 50 directories and 20 clusters), no cluster; homelab: a Flux fleet of 150
// apps laid out as home labs lay theirs out, one-app pull requests previewed beside
// the app alone, and drift targets over it (homelab.go).
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
	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/resultcache"
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
	scenarios := flag.String("scenarios", "1k,10k,1k-20ms,10k-20ms,fleet,homelab", "comma-separated scenarios to run: 1k, 10k, 1k-20ms, 10k-20ms, fleet, homelab")
	floorMode := flag.String("floor", "", "run as the floor client: get+apply or apply-only (with -floor-kubeconfig, -repo, -ref)")
	kubeconfig := flag.String("floor-kubeconfig", "", "floor client: the cluster")
	repo := flag.String("repo", "", "floor client: the repository")
	ref := flag.String("ref", "main", "floor client: the ref to preview")
	only := flag.String("commands", "", "comma-separated commands to run (default all): drift, repeat, repeat1, kubectl32, floor, apply, kubectl, ephemeral")
	launcher := flag.Bool("launch", false, "run as the launcher of the command after --, reporting its usage on fd 3 (see launch.go)")
	serve := flag.String("serve", "", "set up one scenario (its repository, server and base) and wait for ^C, printing how to reach it: for profiling by hand")
	flag.Parse()
	if *launcher {
		os.Exit(launch(flag.Args()))
	}
	var err error
	switch {
	case *floorMode != "":
		err = floor(*floorMode == "get+apply", *kubeconfig, *repo, *ref)
	case *serve == "homelab":
		err = serveHomelab()
	case *serve != "":
		sc, ok := known[*serve]
		if !ok {
			err = fmt.Errorf("unknown scenario %q", *serve)
			break
		}
		_, err = bench("", "", 0, sc, "serve")
	default:
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
	extras  bool          // also sequential kubectl
	// ephemeral also runs drift --cluster ephemeral --base base.
	ephemeral bool
}

var known = map[string]scenario{
	"1k":       {name: "1,000 objects, loopback", perKind: 20, extras: true, ephemeral: true},
	"10k":      {name: "10,000 objects, loopback", perKind: 200, ephemeral: true},
	"1k-20ms":  {name: "1,000 objects, 20 ms round trip", perKind: 20, delay: 10 * time.Millisecond},
	"10k-20ms": {name: "10,000 objects, 20 ms round trip", perKind: 200, delay: 10 * time.Millisecond},
}

func benchAll(drift string, runs int, names []string, only string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	measured := map[string]measuredScenario{}
	defer func() { printGoals(measured) }()
	for _, n := range names {
		if strings.TrimSpace(n) == "homelab" {
			if err := benchHomelab(drift, runs); err != nil {
				return fmt.Errorf("homelab: %w", err)
			}
			continue
		}
		if strings.TrimSpace(n) == "fleet" {
			if err := benchFleet(drift, runs); err != nil {
				return fmt.Errorf("fleet: %w", err)
			}
			continue
		}
		sc, ok := known[strings.TrimSpace(n)]
		if !ok {
			return fmt.Errorf("unknown scenario %q: use 1k, 10k, 1k-20ms, 10k-20ms, fleet or homelab", n)
		}
		got, err := bench(self, drift, runs, sc, only)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		measured[strings.TrimSpace(n)] = got
	}
	return nil
}

// figures are one command's medians.
type figures struct {
	wall, cpu time.Duration
	rssKiB    int64
	changed   string
}

func bench(self, drift string, runs int, sc scenario, only string) (measuredScenario, error) {
	got := measuredScenario{figures: map[string]figures{}}
	err := benchInto(self, drift, runs, sc, only, &got)
	return got, err
}

func benchInto(self, drift string, runs int, sc scenario, only string, m *measuredScenario) error {
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

	cache, err := cachedir.Open(cachedir.Options{Getenv: os.Getenv})
	if err != nil {
		return err
	}
	assets, err := ephemeral.AssetsDir(os.Getenv, cache)
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
	// The cold runs start from an empty cache each; the repeat runs share one, filled
	// by a run before them. The cluster was made a minute ago (its RBAC, its
	// namespaces): answers are stored at once (DRIFT_CACHE_SETTLE=0s), as on a
	// cluster where nothing changed for a minute.
	warm := filepath.Join(work, "cache")
	cold := 0
	type command struct {
		name, key string
		argv      []string
		// env is the command's environment for one run; before, when set, runs first,
		// untimed.
		env    func() []string
		before func(run int) error
	}
	coldEnv := func() []string {
		cold++
		return []string{"DRIFT_CACHE_DIR=" + filepath.Join(work, fmt.Sprintf("cold-%d", cold)), "DRIFT_CACHE_SETTLE=0s"}
	}
	warmEnv := func() []string { return []string{"DRIFT_CACHE_DIR=" + warm, "DRIFT_CACHE_SETTLE=0s"} }
	driftArgv := append([]string{drift}, driftArgs...)
	fill := func(int) error {
		if _, err := os.Stat(warm); err == nil {
			return nil
		}
		_, _, _, _, err := measure(driftArgv, warmEnv())
		return err
	}
	cmds := []command{
		{"drift diff, cold (empty cache)", "drift", driftArgv, coldEnv, nil},
		{"drift diff, repeat (nothing changed)", "repeat", driftArgv, warmEnv, fill},
		{"drift diff, repeat after 1% changed live", "repeat1", driftArgv, warmEnv, func(run int) error {
			if err := fill(run); err != nil {
				return err
			}
			return touch(srv, counts.total/100, sc.perKind, run)
		}},
		{"kubectl diff --server-side --concurrency=32", "kubectl32", append([]string{"kubectl"}, append(kubectlArgs, "--concurrency=32")...), nil, nil},
		{"floor: GET + dry-run apply", "floor", append([]string{self, "-floor", "get+apply"}, floorArgs...), nil, nil},
		{"floor: dry-run apply only", "apply", append([]string{self, "-floor", "apply-only"}, floorArgs...), nil, nil},
	}
	if sc.extras {
		cmds = append(cmds,
			command{"kubectl diff --server-side", "kubectl", append([]string{"kubectl"}, kubectlArgs...), nil, nil})
	}
	if sc.ephemeral {
		cmds = append(cmds,
			command{"drift diff --cluster ephemeral --base base", "ephemeral", []string{drift, "diff", "--repo", repoDir, "--ref", "main", "--cluster", "ephemeral", "--base", "base", "-o", "json", "--out", filepath.Join(work, "eph.json")}, coldEnv, nil})
	}
	if only == "serve" {
		fmt.Printf("repository: %s (ref main)\nkubeconfig: %s\n  drift diff --repo %s --ref main --kubeconfig %s\nwaiting for ^C\n", repoDir, kubeconfig, repoDir, kubeconfig)
		select {}
	}
	fmt.Printf("%-46s %11s %11s %10s %8s\n", "command", "median wall", "client CPU", "peak RSS", "changed")
	var todo []command
	for _, c := range cmds {
		if only == "" || slices.Contains(strings.Split(only, ","), c.key) {
			todo = append(todo, c)
		}
	}
	// Round by round, each command once a round, so that what drifts on the machine
	// during the benchmark (the server's caches, other load) falls on every command
	// alike.
	walls, cpus := map[string][]time.Duration{}, map[string][]time.Duration{}
	got := m.figures
	for i := 0; i < runs; i++ {
		for _, c := range todo {
			if c.before != nil {
				if err := c.before(i); err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
			}
			var env []string
			if c.env != nil {
				env = c.env()
			}
			wall, cpu, rss, out, err := measure(c.argv, env)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			walls[c.key], cpus[c.key] = append(walls[c.key], wall), append(cpus[c.key], cpu)
			f := got[c.key]
			f.rssKiB = max(f.rssKiB, rss)
			f.changed = countChanged(c.key, out, work)
			got[c.key] = f
		}
	}
	for _, c := range todo {
		f := got[c.key]
		f.wall, f.cpu = median(walls[c.key]), median(cpus[c.key])
		got[c.key] = f
		fmt.Printf("%-46s %10.2fs %10.2fs %6.0f MiB %8s\n", c.name, f.wall.Seconds(), f.cpu.Seconds(), float64(f.rssKiB)/1024, f.changed)
	}
	if same, err := sameReports(filepath.Join(work, "last-drift.json"), filepath.Join(work, "last-repeat.json")); err == nil {
		m.repeatSame = &same
		fmt.Printf("the repeat run's report is the cold run's: %v (byte for byte, but for the uid and creation time the server makes up for each new object)\n", same)
	}
	if packs, _ := filepath.Glob(filepath.Join(warm, "dryrun", "v*", "*.pack")); len(packs) > 0 {
		// Named by when they were written: the last is the last run's.
		sort.Strings(packs)
		info, err := os.Stat(packs[len(packs)-1])
		if err == nil {
			fmt.Printf("the dry-run cache: the last run's answers take %.1f MiB for %d objects (each run writes every answer it used to one file; %d runs' files are %.1f MiB)\n",
				float64(info.Size())/(1<<20), counts.total, len(packs), float64(warmSize(warm))/(1<<20))
		}
	}
	d, a := got["drift"], got["apply"]
	if d.wall == 0 || got["kubectl32"].wall == 0 || got["floor"].wall == 0 || a.wall == 0 {
		return nil // ratios need all four
	}
	fmt.Printf("drift's cold wall time: %.2fx kubectl diff --concurrency=32's, %.2fx the GET + apply floor's, %.2fx the apply-only floor's\n",
		d.wall.Seconds()/got["kubectl32"].wall.Seconds(), d.wall.Seconds()/got["floor"].wall.Seconds(), d.wall.Seconds()/a.wall.Seconds())
	if r, r1 := got["repeat"], got["repeat1"]; r.wall > 0 && r1.wall > 0 {
		fmt.Printf("drift's repeat runs: %.2fx the apply-only floor's (nothing changed), %.2fx (1%% changed live)\n",
			r.wall.Seconds()/a.wall.Seconds(), r1.wall.Seconds()/a.wall.Seconds())
	}
	if e := got["ephemeral"]; e.wall > 0 {
		fmt.Printf("drift diff --cluster ephemeral --base, server start included: %.2fx the live apply-only floor's\n", e.wall.Seconds()/a.wall.Seconds())
	}
	return nil
}

// madeUp matches what the server makes up anew for every dry run of a new object.
var madeUp = regexp.MustCompile(`(uid: [0-9a-f-]{36}|creationTimestamp: \\?"[0-9TZ:-]+\\?")`)

// sameReports reports whether two JSON reports are the same but for madeUp.
func sameReports(a, b string) (bool, error) {
	da, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	db, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	return madeUp.ReplaceAllString(string(da), "") == madeUp.ReplaceAllString(string(db), ""), nil
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
		_ = os.WriteFile(filepath.Join(work, "last-"+key+".json"), data, 0o600)
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

// warmSize is the size of the dry-run cache in drift's cache directory warm.
func warmSize(warm string) int64 {
	cache, err := cachedir.Open(cachedir.Options{Getenv: func(k string) string {
		if k == "DRIFT_CACHE_DIR" {
			return warm
		}
		return ""
	}})
	if err != nil {
		return 0
	}
	return resultcache.Size(cache.Sub("dryrun"))
}

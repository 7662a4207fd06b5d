package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/controllercrds"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/sopsdoc/sopstest"
)

// The homelab scenario is a Flux fleet laid out as home labs lay theirs out
// (gitfixture.Fleet: one cluster, 150 apps as Kustomizations and HelmReleases over a
// shared chart and component, SOPS files), with three commits each changing one app:
// a HelmRelease's values, a plain app's manifest, an app's SOPS Secret. Each commit
// is previewed as a pull request check previews it (--base C^ --ref C), on the
// ephemeral server and on a live cluster, from an empty cache directory and from
// one a run over the base filled, beside the same commits of a repository holding
// that app alone; and drift targets runs over the fleet, from an empty cache
// directory and again over the tree it has seen.
const (
	homelabNamespaces = 15
	homelabApps       = 10
)

// homelabEdit is one commit of the scenario.
type homelabEdit struct {
	what, app string
	secret    bool
}

var homelabEdits = []homelabEdit{
	{"a HelmRelease's values", "ns-01/app-010", false},
	{"a plain app's manifest", "ns-01/app-015", false},
	{"an app's SOPS Secret", "ns-01/app-010", true},
}

// homelabRepo writes fleet's repository in dir: its first commit, then one commit per
// edit (empty for an edit of an app the fleet does not hold), packed as a clone's.
// It returns the edits' commits.
func homelabRepo(dir string, fleet gitfixture.Fleet) ([]string, error) {
	r, err := gitfixture.Init(dir)
	if err != nil {
		return nil, err
	}
	files, err := fleet.Files()
	if err != nil {
		return nil, err
	}
	if _, err := r.CommitFiles(files, "fleet"); err != nil {
		return nil, err
	}
	var commits []string
	for i, e := range homelabEdits {
		files := map[string]string{}
		if fleet.Only == "" || fleet.Only == e.app {
			if files, err = fleet.Edit(e.app, i+1, e.secret); err != nil {
				return nil, err
			}
		}
		c, err := r.CommitFiles(files, "edit "+e.app)
		if err != nil {
			return nil, err
		}
		commits = append(commits, c)
	}
	// As a clone holds them (a CI checkout, a developer's repository after git gc):
	// packed, not one file per object.
	if _, err := r.Git("repack", "-a", "-d", "-q"); err != nil {
		return nil, err
	}
	return commits, nil
}

// homelabFleet writes the fleet's repository under work, its SOPS files sealed with a
// new age key: the fleet, the key, the repository and the edits' commits.
func homelabFleet(work string) (gitfixture.Fleet, sopstest.Key, string, []string, error) {
	key, err := sopstest.GenerateKey()
	if err != nil {
		return gitfixture.Fleet{}, key, "", nil, err
	}
	seal := func(plain []byte) ([]byte, error) { return sopstest.Seal(plain, "yaml", key, "^(data|stringData)$") }
	fleet := gitfixture.Fleet{Namespaces: homelabNamespaces, AppsPerNamespace: homelabApps, Seal: seal}
	fleetDir := filepath.Join(work, "fleet")
	commits, err := homelabRepo(fleetDir, fleet)
	return fleet, key, fleetDir, commits, err
}

func benchHomelab(drift string, runs int) error {
	work, err := os.MkdirTemp("", "drift-bench-homelab-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fleet, key, fleetDir, commits, err := homelabFleet(work)
	if err != nil {
		return err
	}
	alone := map[string]string{}
	aloneCommits := map[string][]string{}
	for _, e := range homelabEdits {
		if alone[e.app] != "" {
			continue
		}
		one := fleet
		one.Only = e.app
		alone[e.app] = filepath.Join(work, "alone-"+strings.ReplaceAll(e.app, "/", "-"))
		if aloneCommits[e.app], err = homelabRepo(alone[e.app], one); err != nil {
			return err
		}
	}
	files, _ := fleet.Files()
	fmt.Printf("\n== homelab: a Flux fleet of %d apps (%d files, one cluster), one-app commits, beside the app alone\n", len(fleet.Apps()), len(files))

	kubeconfig, stop, err := homelabCluster(work)
	if err != nil {
		return err
	}
	defer stop()

	env := []string{"SOPS_AGE_KEY=" + key.Identity, "DRIFT_CACHE_SETTLE=0s"}
	cold := 0
	coldEnv := func() []string {
		cold++
		return append(env, "DRIFT_CACHE_DIR="+filepath.Join(work, fmt.Sprintf("cold-%d", cold)))
	}
	warmDir := filepath.Join(work, "warm")
	warmEnv := func() []string { return append(env, "DRIFT_CACHE_DIR="+warmDir) }

	fmt.Printf("%-58s %11s %11s %10s %s\n", "command", "median wall", "client CPU", "peak RSS", "report")
	targets := []string{drift, "targets", "--repo", fleetDir, "--ref", commits[len(commits)-1]}
	cold1, err := homelabMeasure(runs, targets, coldEnv)
	if err != nil {
		return err
	}
	cold1.print("drift targets, fleet, empty cache")
	if _, _, _, _, err := measure(targets, warmEnv()); err != nil {
		return err
	}
	warm1, err := homelabMeasure(runs, targets, warmEnv)
	if err != nil {
		return err
	}
	warm1.print("drift targets, fleet, tree seen before")

	// The base seen before: a cache directory a run over the base filled (as the
	// push that made the base, or an earlier push to the pull request, fills it),
	// a new copy for each run.
	seenEnv := func(repo, commit string) (func() []string, error) {
		dir := filepath.Join(work, fmt.Sprintf("seen-%d", cold))
		cold++
		if _, _, _, _, err := measure([]string{drift, "targets", "--repo", repo, "--ref", commit + "^"}, append(env, "DRIFT_CACHE_DIR="+dir)); err != nil {
			return nil, err
		}
		n := 0
		return func() []string {
			n++
			// The directory and its key beside it (cachedir: its path with .key added).
			copyDir := fmt.Sprintf("%s-%d", dir, n)
			key, err := os.ReadFile(dir + ".key")
			if err == nil {
				err = os.WriteFile(copyDir+".key", key, 0o600)
			}
			if err == nil {
				err = os.CopyFS(copyDir, os.DirFS(dir))
			}
			if err != nil {
				return append(env, "DRIFT_CACHE_DIR="+filepath.Join(work, "unreadable"))
			}
			return append(env, "DRIFT_CACHE_DIR="+copyDir)
		}, nil
	}
	worst := map[string]float64{}
	for i, e := range homelabEdits {
		for _, where := range []string{"ephemeral", "live"} {
			argv := func(repo, commit string) []string {
				a := []string{drift, "diff", "--repo", repo, "--base", commit + "^", "--ref", commit, "-o", "json"}
				if where == "ephemeral" {
					return append(a, "--cluster", "ephemeral")
				}
				return append(a, "--kubeconfig", kubeconfig)
			}
			f, err := homelabMeasure(runs, argv(fleetDir, commits[i]), coldEnv)
			if err != nil {
				return err
			}
			seen, err := seenEnv(fleetDir, commits[i])
			if err != nil {
				return err
			}
			s, err := homelabMeasure(runs, argv(fleetDir, commits[i]), seen)
			if err != nil {
				return err
			}
			a, err := homelabMeasure(runs, argv(alone[e.app], aloneCommits[e.app][i]), coldEnv)
			if err != nil {
				return err
			}
			f.print(fmt.Sprintf("%s, %s: fleet, empty cache", e.what, where))
			s.print(fmt.Sprintf("%s, %s: fleet, base seen before", e.what, where))
			a.print(fmt.Sprintf("%s, %s: the app alone, empty cache", e.what, where))
			coldRatio, seenRatio := f.wall.Seconds()/a.wall.Seconds(), s.wall.Seconds()/a.wall.Seconds()
			worst["cold"], worst["seen"] = max(worst["cold"], coldRatio), max(worst["seen"], seenRatio)
			fmt.Printf("  the fleet's run: %.2fx the app alone's (empty cache), %.2fx (base seen before); the reports agree: %v\n",
				coldRatio, seenRatio, f.report == a.report && s.report == a.report)
		}
	}
	goal := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	// A pull request's check runs with the cache the runs before it left (the
	// base's push, an earlier push to the pull request): the goal is measured there.
	// From an empty cache, what each target reads is known only by rendering it,
	// and the fleet is rendered once: that figure is printed beside it.
	fmt.Printf("goal: a one-app change costs <= 1.5x the app alone, with the base seen before: %.2fx at worst, %s (from an empty cache, the fleet rendered once: %.2fx at worst)\n",
		worst["seen"], goal(worst["seen"] <= 1.5), worst["cold"])
	fmt.Printf("goal: drift targets <= 1 s cold: %.2fs, %s; <= 0.2 s over a tree seen before: %.2fs, %s\n",
		cold1.wall.Seconds(), goal(cold1.wall <= time.Second), warm1.wall.Seconds(), goal(warm1.wall <= 200*time.Millisecond))
	return nil
}

// serveHomelab writes the fleet's repository, starts its live cluster and waits for
// ^C, printing how to reach them: for profiling by hand.
func serveHomelab() error {
	work, err := os.MkdirTemp("", "drift-bench-homelab-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	_, key, fleetDir, commits, err := homelabFleet(work)
	if err != nil {
		return err
	}
	kubeconfig, stop, err := homelabCluster(work)
	if err != nil {
		return err
	}
	defer stop()
	keyFile := filepath.Join(work, "age.key")
	if err := os.WriteFile(keyFile, []byte(key.Identity+"\n"), 0o600); err != nil {
		return err
	}
	fmt.Printf("repository: %s\ncommits: %s\nkubeconfig: %s\nenvironment: SOPS_AGE_KEY_FILE=%s\n^C to stop\n",
		fleetDir, strings.Join(commits, " "), kubeconfig, keyFile)
	select {}
}

// homelabFigures are one command's medians and what its report says.
type homelabFigures struct {
	wall, cpu time.Duration
	rssKiB    int64
	report    string
}

func (f homelabFigures) print(name string) {
	fmt.Printf("%-58s %10.2fs %10.2fs %6.0f MiB %s\n", name, f.wall.Seconds(), f.cpu.Seconds(), float64(f.rssKiB)/1024, f.report)
}

// homelabMeasure runs argv runs times, each with env(), and returns the medians and
// the last report's summary (for drift diff: the count of each category, and
// whether it is complete; for drift targets: how many lines).
func homelabMeasure(runs int, argv []string, env func() []string) (homelabFigures, error) {
	var walls, cpus []time.Duration
	var f homelabFigures
	for i := 0; i < runs; i++ {
		// Exit 2 (errors) is measured too, and said: the report is then incomplete.
		wall, cpu, rss, out, code, err := measureExit(argv, env(), 2)
		if err != nil {
			return f, fmt.Errorf("%s: %w", strings.Join(argv[1:3], " "), err)
		}
		walls, cpus, f.rssKiB = append(walls, wall), append(cpus, cpu), max(f.rssKiB, rss)
		f.report = fmt.Sprintf("exit %d, %s", code, summary(argv[1], out))
	}
	f.wall, f.cpu = median(walls), median(cpus)
	return f, nil
}

// summary is what a report says in short: the categories of its objects that were
// previewed (drift diff -o json), or the lines of drift targets.
func summary(cmd, out string) string {
	if cmd == "targets" {
		return fmt.Sprintf("%d lines", strings.Count(out, "\n"))
	}
	var rep struct {
		Complete bool `json:"complete"`
		Targets  []struct {
			Skipped string `json:"skipped"`
			Objects []struct {
				Category string `json:"category"`
			} `json:"objects"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return "unreadable: " + err.Error()
	}
	counts := map[string]int{}
	previewed := 0
	for _, t := range rep.Targets {
		if t.Skipped == "" {
			previewed++
		}
		for _, o := range t.Objects {
			counts[o.Category]++
		}
	}
	return fmt.Sprintf("complete=%v previewed=%d add=%d modify=%d delete=%d error=%d", rep.Complete, previewed,
		counts["add"], counts["modify"], counts["delete"], counts["error"])
}

// homelabCluster starts the live cluster of the scenario: a local API server serving
// Flux's CRDs and the fleet's namespaces. It returns its kubeconfig.
func homelabCluster(work string) (string, func(), error) {
	cache, err := cachedir.Open(cachedir.Options{Getenv: os.Getenv})
	if err != nil {
		return "", nil, err
	}
	assets, err := ephemeral.AssetsDir(os.Getenv, cache)
	if err != nil {
		return "", nil, err
	}
	srv, err := ephemeral.Start(context.Background(), assets)
	if err != nil {
		return "", nil, err
	}
	stopOnSignal(srv, work)
	var objs []render.Object
	for _, k := range []string{"GitRepository.source.toolkit.fluxcd.io", "Kustomization.kustomize.toolkit.fluxcd.io", "HelmRelease.helm.toolkit.fluxcd.io"} {
		crd, err := controllercrds.For(schema.ParseGroupKind(k))
		if err != nil || crd == nil {
			srv.Stop()
			return "", nil, fmt.Errorf("drift's copy of the %s CRD: %v", k, err)
		}
		objs = append(objs, render.Object{Obj: crd.Object.DeepCopy()})
	}
	for _, ns := range []string{"flux-system"} {
		objs = append(objs, render.Object{Obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}})
	}
	for n := 0; n < homelabNamespaces; n++ {
		objs = append(objs, render.Object{Obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": fmt.Sprintf("ns-%02d", n)}}}})
	}
	clients, err := kube.NewClients(srv.Config, 8)
	if err != nil {
		srv.Stop()
		return "", nil, err
	}
	if failed := ephemeral.Seed(context.Background(), clients, objs, dryrun.Options{Applier: kubectlssa.New(), Concurrency: 8}); len(failed) > 0 {
		srv.Stop()
		return "", nil, fmt.Errorf("the live cluster's CRDs and namespaces: %s", failed[0].Err.Message)
	}
	kubeconfig := filepath.Join(work, "kubeconfig")
	if err := writeKubeconfig(srv, srv.Config.Host, kubeconfig); err != nil {
		srv.Stop()
		return "", nil, err
	}
	return kubeconfig, func() { _ = srv.Stop() }, nil
}

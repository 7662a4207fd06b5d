// Command htmlbench measures the HTML report (--html) of a large change in headless
// Chromium: the page's size, how long it takes to open (from navigation to the end of
// its script, first layout included) and how long each filter takes (the filter's
// pass over every object plus the layout it causes), as the page itself records them.
// The figures are in docs/performance.md.
//
//	go run ./hack/htmlbench -objects 10000
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/scrub"
)

func main() {
	n := flag.Int("objects", 10000, "objects in the report")
	runs := flag.Int("runs", 3, "runs of each measurement (the median is printed)")
	flag.Parse()
	if err := run(*n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "htmlbench:", err)
		os.Exit(1)
	}
}

func run(n, runs int) error {
	browser, err := findBrowser()
	if err != nil {
		return err
	}
	rep, err := entry.Build(entry.Input{Ref: "main", Commit: "0123456789abcdef0123456789abcdef01234567",
		Targets: []entry.TargetInput{{Name: "big", Results: results(n)}}}, entry.NewBuilder(entry.Options{}, scrub.New()))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "htmlbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var page bytes.Buffer
	if err := write.HTML(&page, rep); err != nil {
		return err
	}
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		return err
	}
	s := rep.Summary
	fmt.Printf("HTML report of %d objects (%d to add, %d to modify, %d unchanged, %d risky): %.1f MiB\n",
		n, s.Add, s.Modify, s.Unchanged, s.Risky, float64(page.Len())/(1<<20))
	fmt.Println("| what | median of runs |\n|---|---:|")
	for _, m := range []struct{ what, fragment, attr string }{
		{"open (navigation to script end, layout included)", "", "open-ms"},
		{"filter: modify only", "#category=modify", "filter-ms"},
		{"filter: risky only", "#category=add,modify,delete,error&risky=1", "filter-ms"},
		{"filter: kind Deployment", "#category=add,modify,delete,error,unchanged&kind=Deployment", "filter-ms"},
		{"search: one name among all", "#category=add,modify,delete,error,unchanged&q=cm-04999", "filter-ms"},
	} {
		var got []float64
		var wall time.Duration
		for i := 0; i < runs; i++ {
			start := time.Now()
			dom, err := dump(browser, dir, file+m.fragment)
			if err != nil {
				return err
			}
			wall += time.Since(start)
			v := regexp.MustCompile(`data-` + m.attr + `="([0-9.]+)"`).FindStringSubmatch(dom)
			if v == nil {
				return fmt.Errorf("%s: the page recorded no %s", m.what, m.attr)
			}
			var f float64
			fmt.Sscanf(v[1], "%g", &f)
			got = append(got, f)
		}
		fmt.Printf("| %s | %.0f ms (chromium process %.1f s) |\n", m.what, median(got), wall.Seconds()/float64(runs))
	}
	return nil
}

func dump(browser, dir, url string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+url).Output()
	return string(out), err
}

func median(v []float64) float64 {
	for i := range v {
		for j := i + 1; j < len(v); j++ {
			if v[j] < v[i] {
				v[i], v[j] = v[j], v[i]
			}
		}
	}
	return v[len(v)/2]
}

func findBrowser() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium is not installed (apt-get install chromium)")
}

// results are n objects: one in ten ConfigMaps modified, one in a hundred Deployments
// with a new image (a rollout: risky), one in twenty added, the rest unchanged.
func results(n int) []dryrun.Result {
	out := make([]dryrun.Result, 0, n)
	for i := 0; i < n; i++ {
		var live, merged *unstructured.Unstructured
		switch {
		case i%100 == 0:
			live, merged = deployment(i, "1.4"), deployment(i, "1.5")
		case i%20 == 1:
			merged = configMap(i, "new")
		case i%10 == 2:
			live, merged = configMap(i, "old"), configMap(i, "new")
		default:
			live = configMap(i, "same")
			merged = live
		}
		obj := merged
		if obj == nil {
			obj = live
		}
		out = append(out, dryrun.Result{ID: object.IDOf(obj), Object: render.Object{Obj: obj, Source: fmt.Sprintf("apps/file-%03d.yaml", i/100), Doc: i%100 + 1}, Live: live, Merged: merged})
	}
	return out
}

func configMap(i int, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": fmt.Sprintf("cm-%05d", i), "namespace": fmt.Sprintf("team-%02d", i%40)},
		"data":     map[string]any{"a": "1", "b": "2", "c": "3", "value": value, "d": "4", "e": "5"}}}
}

func deployment(i int, tag string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": fmt.Sprintf("web-%05d", i), "namespace": fmt.Sprintf("team-%02d", i%40)},
		"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "web:" + tag}}}}}}}
}

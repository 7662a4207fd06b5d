package render

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/source"
)

// RefusedError is an input drift will not build, because building it would run code
// from the repository, reach the network, or read outside the repository. It names
// the file and the entry.
type RefusedError struct {
	// File is the repository path of the file that asks for it.
	File string
	// Entry is the offending entry as written ("resources: https://...").
	Entry string
	// Why says what the entry would do and what to do instead.
	Why string
	// Missing is set when the entry is simply not in the repository: an error, not a
	// refusal (kustomize would have tried to fetch it).
	Missing bool
}

func (e *RefusedError) Error() string {
	if e.Missing {
		return fmt.Sprintf("%s: %s: %s", e.File, e.Entry, e.Why)
	}
	return fmt.Sprintf("%s: refused %s: %s", e.File, e.Entry, e.Why)
}

// FindKustomization returns the kustomization file of dir ("" when there is none), for
// callers outside render.
func FindKustomization(fsys fs.FS, dir string) string { return findKustomization(fsys, dir) }

// findKustomization returns the kustomization file in dir, under any of the names
// kustomize recognizes ("" when there is none).
func findKustomization(fsys fs.FS, dir string) string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := joinRepo(dir, n)
		if info, err := fs.Stat(fsys, p); err == nil && !info.IsDir() {
			return p
		}
	}
	return ""
}

// joinRepo joins repository paths, "" or "." being the root.
func joinRepo(dir, name string) string {
	if dir == "" || dir == "." {
		return path.Clean(name)
	}
	return path.Join(dir, name)
}

// kustCheck walks a kustomization and everything it includes, before kustomize is
// run, and refuses what drift never does: exec and container KRM functions, plugins
// other than kustomize's built-in ones, Helm chart inflation, remote bases and files
// fetched over the network, and paths that lead outside the repository.
type kustCheck struct {
	fsys fs.FS
	seen map[string]bool
	// helm says whether helmCharts are inflated (drift renders them in process);
	// charts collects the kustomizations that have them.
	helm   bool
	charts []helmCharts
}

// helmCharts is a kustomization with helmCharts entries.
type helmCharts struct {
	file, dir string
	k         types.Kustomization
}

// checkKustomization checks the kustomization in dir and all it includes; with
// helm, their helmCharts entries are returned to be inflated, else refused.
func checkKustomization(fsys fs.FS, dir string, helm bool) ([]helmCharts, error) {
	c := &kustCheck{fsys: fsys, seen: map[string]bool{}, helm: helm}
	err := c.dir(dir)
	return c.charts, err
}

func (c *kustCheck) dir(dir string) error {
	if c.seen[dir] {
		return nil
	}
	c.seen[dir] = true
	file := findKustomization(c.fsys, dir)
	if file == "" {
		return nil // a plain directory of resources; kustomize reports it if it must
	}
	data, err := fs.ReadFile(c.fsys, file)
	if err != nil {
		return fmt.Errorf("%s: cannot be read: %s", file, unwrapPathError(err))
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("%s: malformed kustomization: %s", file, strings.TrimPrefix(err.Error(), "error unmarshaling JSON: "))
	}
	refuse := func(entry, why string) error { return &RefusedError{File: file, Entry: entry, Why: why} }

	switch {
	case len(k.HelmChartInflationGenerator) > 0:
		return refuse("helmChartInflationGenerator", "the old Helm inflation field is not read; write the charts under helmCharts")
	case (len(k.HelmCharts) > 0 || k.HelmGlobals != nil) && !c.helm:
		return refuse("helmCharts", "Flux's kustomize-controller does not inflate Helm charts (it builds without --enable-helm), so Flux fails this build too; deploy the chart with a HelmRelease")
	case len(k.HelmCharts) > 0:
		if k.HelmGlobals != nil && k.HelmGlobals.ChartHome != "" {
			if _, err := c.local(dir, k.HelmGlobals.ChartHome); err != nil {
				return refuse("helmGlobals: chartHome", err.Error())
			}
		}
		for _, h := range k.HelmCharts {
			for _, vf := range append([]string{h.ValuesFile}, h.AdditionalValuesFiles...) {
				if vf == "" {
					continue
				}
				if strings.Contains(vf, "://") {
					return refuse("helmCharts: valuesFile "+vf, "files are never fetched over the network; put the file in the repository")
				}
				if _, err := c.local(dir, vf); err != nil {
					return refuse("helmCharts: valuesFile "+vf, err.Error())
				}
			}
		}
		c.charts = append(c.charts, helmCharts{file: file, dir: dir, k: k})
	}
	// resources, components and bases: directories (kustomizations) or files. Anything
	// that is neither in the repository would make kustomize try a git clone.
	for _, group := range []struct {
		field   string
		entries []string
	}{{"resources", k.Resources}, {"components", k.Components}, {"bases", k.Bases}} {
		for _, e := range group.entries {
			entry := group.field + ": " + e
			p, err := c.local(dir, e)
			if err != nil {
				return refuse(entry, err.Error())
			}
			info, err := fs.Stat(c.fsys, p)
			if err != nil {
				if looksRemote(e) {
					return refuse(entry, "remote bases are fetched with git over the network; vendor it into the repository and refer to it by a relative path")
				}
				if errors.Is(err, fs.ErrNotExist) {
					return &RefusedError{File: file, Entry: entry, Missing: true,
						Why: "not found in the repository (kustomize would try to fetch it as a remote base); fix the path"}
				}
				if source.IsOutside(err) {
					return refuse(entry, unwrapPathError(err))
				}
				return &RefusedError{File: file, Entry: entry, Missing: true, Why: "cannot be read: " + unwrapPathError(err)}
			}
			if info.IsDir() {
				if err := c.dir(p); err != nil {
					return err
				}
			}
		}
	}
	// Fields that name files kustomize loads, from the repository or over http(s).
	var files []string
	for _, p := range k.Patches {
		files = append(files, "patches: "+p.Path)
	}
	for _, p := range k.PatchesJson6902 {
		files = append(files, "patchesJson6902: "+p.Path)
	}
	for _, p := range k.PatchesStrategicMerge {
		if s := string(p); !strings.Contains(s, "\n") {
			files = append(files, "patchesStrategicMerge: "+s)
		}
	}
	for _, r := range k.Replacements {
		files = append(files, "replacements: "+r.Path)
	}
	for _, s := range k.Crds {
		files = append(files, "crds: "+s)
	}
	for _, s := range k.Configurations {
		files = append(files, "configurations: "+s)
	}
	if p, ok := k.OpenAPI["path"]; ok {
		files = append(files, "openapi: "+p)
	}
	kv := func(field string, src types.KvPairSources) {
		for _, f := range src.FileSources {
			if _, after, ok := strings.Cut(f, "="); ok {
				f = after
			}
			files = append(files, field+" files: "+f)
		}
		for _, f := range src.EnvSources {
			files = append(files, field+" envs: "+f)
		}
		if src.EnvSource != "" {
			files = append(files, field+" env: "+src.EnvSource)
		}
	}
	for _, g := range k.ConfigMapGenerator {
		kv("configMapGenerator", g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		kv("secretGenerator", g.KvPairSources)
	}
	for _, entry := range files {
		_, p, _ := strings.Cut(entry, ": ")
		if p == "" {
			continue
		}
		if strings.Contains(p, "://") {
			return refuse(entry, "files are never fetched over the network; put the file in the repository and refer to it by a relative path")
		}
		if _, err := c.local(dir, p); err != nil {
			return refuse(entry, err.Error())
		}
	}
	for _, group := range []struct {
		field   string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		for _, e := range group.entries {
			if err := c.plugin(file, dir, group.field, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// local resolves a path written in the kustomization in dir, refusing absolute paths
// and paths that climb out of the repository.
func (c *kustCheck) local(dir, p string) (string, error) {
	if path.IsAbs(p) {
		return "", fmt.Errorf("absolute paths are not allowed; write it relative to the kustomization")
	}
	joined := path.Join(dir, p)
	if dir == "" {
		joined = path.Clean(p)
	}
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return "", fmt.Errorf("leads outside the repository")
	}
	return joined, nil
}

// plugin checks a generators/transformers/validators entry: inline configuration,
// a file of configurations, or a kustomization directory producing them.
func (c *kustCheck) plugin(file, dir, field, entry string) error {
	short := entry
	if i := strings.IndexByte(short, '\n'); i >= 0 {
		short = "(inline " + firstKind(entry) + ")"
	}
	label := field + ": " + short
	if strings.Contains(entry, "\n") || strings.Contains(entry, "apiVersion:") {
		return checkPluginConfigs(file, label, []byte(entry))
	}
	if strings.Contains(entry, "://") || looksRemote(entry) {
		return &RefusedError{File: file, Entry: label, Why: "remote plugin configurations are fetched over the network; vendor them into the repository"}
	}
	p, err := c.local(dir, entry)
	if err != nil {
		return &RefusedError{File: file, Entry: label, Why: err.Error()}
	}
	info, err := fs.Stat(c.fsys, p)
	if err != nil {
		return nil // kustomize reports the missing file
	}
	if !info.IsDir() {
		data, err := fs.ReadFile(c.fsys, p)
		if err != nil {
			return nil
		}
		return checkPluginConfigs(p, label, data)
	}
	if err := c.dir(p); err != nil {
		return err
	}
	// The directory's own resources are the plugin configurations.
	kf := findKustomization(c.fsys, p)
	if kf == "" {
		return nil
	}
	data, _ := fs.ReadFile(c.fsys, kf)
	var k types.Kustomization
	if yaml.Unmarshal(data, &k) != nil {
		return nil
	}
	for _, r := range k.Resources {
		rp := path.Join(p, r)
		if info, err := fs.Stat(c.fsys, rp); err == nil && !info.IsDir() {
			if data, err := fs.ReadFile(c.fsys, rp); err == nil {
				if err := checkPluginConfigs(rp, label, data); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// functionAnnotations are the annotations that make a configuration a KRM function.
var functionAnnotations = []string{"config.kubernetes.io/function", "config.k8s.io/function"}

// checkPluginConfigs refuses every configuration that is a KRM function (exec,
// container or starlark) or anything but a kustomize built-in (apiVersion builtin).
func checkPluginConfigs(file, entry string, data []byte) error {
	for i, doc := range SplitDocuments(data) {
		if isBlank(doc) {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			continue // kustomize reports malformed configurations
		}
		where := fmt.Sprintf("%s (document %d, %s)", entry, i+1, head.Kind)
		for _, a := range functionAnnotations {
			if spec, ok := head.Metadata.Annotations[a]; ok {
				kind := "KRM function"
				switch {
				case strings.Contains(spec, "exec"):
					kind = "exec KRM function"
				case strings.Contains(spec, "container"):
					kind = "container KRM function"
				case strings.Contains(spec, "starlark"):
					kind = "starlark KRM function"
				}
				return &RefusedError{File: file, Entry: where, Why: kind + ": drift never runs programs or containers from the repository; render it in CI before drift, or use kustomize's built-in generators and transformers"}
			}
		}
		if head.APIVersion != "builtin" {
			return &RefusedError{File: file, Entry: where, Why: fmt.Sprintf("apiVersion %q is not a kustomize built-in plugin (apiVersion: builtin); drift runs only built-in generators and transformers", head.APIVersion)}
		}
	}
	return nil
}

func firstKind(doc string) string {
	for _, line := range strings.Split(doc, "\n") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "kind:"); ok {
			return strings.TrimSpace(k)
		}
	}
	return "configuration"
}

// looksRemote reports whether a kustomize entry is a remote target: a URL, an scp-like
// git address, or a host/org/repo path such as github.com/org/repo//dir?ref=v1.
func looksRemote(s string) bool {
	if strings.Contains(s, "://") || strings.HasPrefix(s, "git@") || strings.Contains(s, "?ref=") ||
		strings.Contains(s, "?version=") || strings.HasSuffix(s, ".git") || strings.Contains(s, ".git//") {
		return true
	}
	host, _, ok := strings.Cut(s, "/")
	return ok && strings.Contains(host, ".") && !strings.HasPrefix(host, ".") &&
		(strings.HasSuffix(host, ".com") || strings.HasSuffix(host, ".org") || strings.HasSuffix(host, ".io") || strings.Contains(s, "//"))
}

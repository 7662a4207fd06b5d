// Command controllercrds writes internal/controllercrds/data: the CustomResourceDefinitions
// of the Flux, flux-operator and Argo CD releases drift serves on ephemeral servers, taken
// from the Go module proxy (GOPROXY's first URL) and checked against the checksum database.
//
//	go run ./hack/controllercrds [-flux v2.9.5] [-flux-operator v0.59.0] [-argo-cd v3.6.1]
//
// Flux's component versions are the ones the flux2 module of that release names in
// manifests/bases. A component whose module the proxy serves gives its config/crd/bases;
// one whose module is not served (notification-controller, the image controllers,
// source-watcher) has its CRDs generated from its api module by the controller-gen
// version the release's source-controller Makefile pins, the way its own `make manifests`
// writes them. -verify-gen generates the served ones too and fails when a file differs.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Release is one controller release drift ships the CRDs of (data/releases.json).
type Release struct {
	Name       string      `json:"name"`
	Version    string      `json:"version"`
	Components []Component `json:"components"`
}

// Component is one controller of a release and where its CRDs were taken from.
type Component struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	From    string   `json:"from"`
	Files   []string `json:"files"`
}

var (
	fluxVersion     = flag.String("flux", "v2.9.5", "Flux release (github.com/fluxcd/flux2/v2)")
	operatorVersion = flag.String("flux-operator", "v0.59.0", "flux-operator release")
	argoVersion     = flag.String("argo-cd", "v3.6.1", "Argo CD release (github.com/argoproj/argo-cd/v3)")
	out             = flag.String("out", "internal/controllercrds/data", "directory to write")
	verifyGen       = flag.Bool("verify-gen", false, "also generate the CRDs of served modules and compare")
)

func main() {
	log.SetFlags(0)
	flag.Parse()
	if err := os.RemoveAll(*out); err != nil {
		log.Fatal(err)
	}
	var releases []Release
	flux, err := fluxRelease(*fluxVersion)
	if err != nil {
		log.Fatal(err)
	}
	releases = append(releases, flux)
	for _, r := range []struct{ name, module, version, dir string }{
		{"flux-operator", "github.com/controlplaneio-fluxcd/flux-operator", *operatorVersion, "config/crd/bases"},
		{"argo-cd", "github.com/argoproj/argo-cd/v3", *argoVersion, "manifests/crds"},
	} {
		z, err := module(r.module, r.version)
		if err != nil {
			log.Fatal(err)
		}
		files, err := extract(z, r.module+"@"+r.version+"/"+r.dir, filepath.Join(*out, r.name), false)
		if err != nil {
			log.Fatal(err)
		}
		releases = append(releases, Release{Name: r.name, Version: r.version, Components: []Component{{
			Name: r.name, Version: r.version, From: r.module + "@" + r.version + " " + r.dir, Files: files}}})
	}
	data, _ := json.MarshalIndent(releases, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "releases.json"), append(data, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}

var crdsURL = regexp.MustCompile(`https://github\.com/fluxcd/([a-z-]+)/releases/download/(v[0-9.]+)/[a-z-]+\.crds\.yaml`)

// fluxRelease writes the CRDs of every component the flux2 module names.
func fluxRelease(version string) (Release, error) {
	rel := Release{Name: "flux", Version: version}
	z, err := module("github.com/fluxcd/flux2/v2", version)
	if err != nil {
		return rel, err
	}
	versions := map[string]string{}
	var names []string
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, "/kustomization.yaml") || !strings.Contains(f.Name, "/manifests/bases/") {
			continue
		}
		body, err := read(f)
		if err != nil {
			return rel, err
		}
		if m := crdsURL.FindStringSubmatch(string(body)); m != nil {
			versions[m[1]] = m[2]
			names = append(names, m[1])
		}
	}
	if versions["source-controller"] == "" {
		return rel, fmt.Errorf("flux %s names no source-controller", version)
	}
	// source-controller first: its Makefile names the controller-gen version.
	sort.Strings(names)
	names = slices.DeleteFunc(names, func(n string) bool { return n == "source-controller" })
	names = append([]string{"source-controller"}, names...)
	var controllerGen string
	for _, name := range names {
		v := versions[name]
		dir := filepath.Join(*out, "flux", name)
		c := Component{Name: name, Version: v}
		mod := "github.com/fluxcd/" + name
		if cz, err := module(mod, v); err == nil {
			c.From = mod + "@" + v + " config/crd/bases"
			if c.Files, err = extract(cz, mod+"@"+v+"/config/crd/bases", dir, false); err != nil {
				return rel, err
			}
			if name == "source-controller" {
				controllerGen = makeVar(cz, mod+"@"+v+"/Makefile", "CONTROLLER_GEN_VERSION")
			}
			if *verifyGen {
				if err := compareGenerated(mod, v, dir, &controllerGen); err != nil {
					return rel, err
				}
			}
		} else {
			log.Printf("%s@%s: %v: generating its CRDs from its api module", mod, v, err)
			api, az, err := apiModule(mod, v)
			if err != nil {
				return rel, err
			}
			if controllerGen == "" {
				return rel, fmt.Errorf("source-controller's Makefile names no CONTROLLER_GEN_VERSION")
			}
			if c.Files, err = generate(az, api+"@"+v, controllerGen, dir); err != nil {
				return rel, err
			}
			c.From = api + "@" + v + " with controller-gen " + controllerGen
		}
		rel.Components = append(rel.Components, c)
	}
	sort.Slice(rel.Components, func(i, j int) bool { return rel.Components[i].Name < rel.Components[j].Name })
	return rel, nil
}

// compareGenerated checks that controller-gen writes a served component's files as its
// module holds them.
func compareGenerated(mod, v, dir string, controllerGen *string) error {
	api, az, err := apiModule(mod, v)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "crdgen-out")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := generate(az, api+"@"+v, *controllerGen, tmp); err != nil {
		return err
	}
	cmd := exec.Command("diff", "-r", tmp, dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("controller-gen %s on %s@%s does not write what the module holds", *controllerGen, api, v)
	}
	log.Printf("controller-gen %s on %s@%s writes what %s@%s holds", *controllerGen, api, v, mod, v)
	return nil
}

// apiModule fetches a controller's api module (api, or api/vN for major version N ≥ 2).
func apiModule(mod, v string) (string, *zip.Reader, error) {
	api := mod + "/api"
	if major := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0]; major != "0" && major != "1" {
		api += "/v" + major
	}
	z, err := module(api, v)
	return api, z, err
}

// generate runs controller-gen on an api module, as `make manifests` does.
func generate(z *zip.Reader, prefix, controllerGen, dir string) ([]string, error) {
	src, err := os.MkdirTemp("", "crdgen-src")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(src)
	if _, err := extract(z, prefix, src, true); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "run", "sigs.k8s.io/controller-tools/cmd/controller-gen@"+controllerGen,
		"crd:crdVersions=v1", "paths=./...", "output:crd:artifacts:config="+abs)
	cmd.Dir, cmd.Stdout, cmd.Stderr = src, os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("controller-gen on %s: %w", prefix, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	return files, nil
}

// makeVar reads `NAME ?= value` from a Makefile in the module.
func makeVar(z *zip.Reader, name, variable string) string {
	for _, f := range z.File {
		if f.Name != name {
			continue
		}
		body, _ := read(f)
		m := regexp.MustCompile(`(?m)^` + variable + `\s*\?=\s*(\S+)`).FindStringSubmatch(string(body))
		if m != nil {
			return m[1]
		}
	}
	return ""
}

// extract writes the files under prefix in the zip to dir (whole), or only the YAML
// files directly under it, kustomization.yaml left out, and returns their names.
func extract(z *zip.Reader, prefix, dir string, whole bool) ([]string, error) {
	var files []string
	for _, f := range z.File {
		rel, ok := strings.CutPrefix(f.Name, prefix+"/")
		if !ok || strings.HasSuffix(f.Name, "/") {
			continue
		}
		// A whole module is written to generate from; of a CRD directory, its CRD files.
		if !whole && (strings.Contains(rel, "/") || path.Ext(rel) != ".yaml" || rel == "kustomization.yaml") {
			continue
		}
		body, err := read(f)
		if err != nil {
			return nil, err
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(target, body, 0o644); err != nil {
			return nil, err
		}
		files = append(files, rel)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no file", prefix)
	}
	sort.Strings(files)
	return files, nil
}

func read(f *zip.File) ([]byte, error) {
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// module downloads a module version's zip from the proxy and checks its hash against
// the checksum database's line for it (read through the same proxy).
func module(mod, v string) (*zip.Reader, error) {
	proxy := strings.Split(goenv("GOPROXY"), ",")[0]
	if proxy == "" || proxy == "direct" || proxy == "off" {
		proxy = "https://proxy.golang.org"
	}
	body, err := get(proxy + "/" + escape(mod) + "/@v/" + v + ".zip")
	if err != nil {
		return nil, err
	}
	z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return nil, err
	}
	lookup, err := get(proxy + "/sumdb/sum.golang.org/lookup/" + escape(mod) + "@" + v)
	if err != nil {
		return nil, fmt.Errorf("checksum database: %w", err)
	}
	want := mod + " " + v + " " + hash(z) + "\n"
	if !strings.Contains(string(lookup), want) {
		return nil, fmt.Errorf("%s@%s: the zip's hash %s is not the checksum database's", mod, v, hash(z))
	}
	return z, nil
}

// hash is the module zip's go.sum hash (h1: dirhash.Hash1).
func hash(z *zip.Reader) string {
	var names []string
	files := map[string]*zip.File{}
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, "/") {
			names = append(names, f.Name)
			files[f.Name] = f
		}
	}
	sort.Strings(names)
	summary := sha256.New()
	for _, n := range names {
		body, _ := read(files[n])
		fmt.Fprintf(summary, "%x  %s\n", sha256.Sum256(body), n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(summary.Sum(nil))
}

// escape is the proxy's case encoding of a module path (!x for X).
func escape(mod string) string {
	var b strings.Builder
	for _, r := range mod {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}

func goenv(name string) string {
	outb, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(outb))
}

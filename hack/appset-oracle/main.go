// Command appset-oracle runs Argo CD's own ApplicationSet generators and template
// rendering over drift's appset test cases and records the Applications they
// generate, so drift's internal/appset can be compared with the controller.
//
// Usage: appset-oracle DIR — for every DIR/*.case.yaml it writes DIR/*.want.json;
// for DIR/pathspec.yaml (files and git files patterns) it writes
// DIR/pathspec.want.json, the files argo-cd's git client lists for each pattern.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	"github.com/argoproj/argo-cd/v3/applicationset/utils"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/git"
)

// namespace is the Argo CD namespace of every case: cluster Secrets, AppProjects.
const namespace = "argocd"

// testCase is one case file: drift's appset.Request fields plus the repository's files.
type testCase struct {
	Description        string            `json:"description"`
	AppSet             map[string]any    `json:"appSet"`
	Clusters           []cluster         `json:"clusters"`
	Files              map[string]string `json:"files"`
	NewGitFileGlobbing bool              `json:"newGitFileGlobbing"`
}

type cluster struct {
	Name        string            `json:"name"`
	Server      string            `json:"server"`
	Project     string            `json:"project"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// want is what a case's .want.json holds.
type want struct {
	Oracle       string           `json:"oracle"`
	Applications []map[string]any `json:"applications"`
	Error        string           `json:"error,omitempty"`
}

func main() {
	// Quiet the controller's logs and argo-cd's git client's trace lines.
	log.SetLevel(log.PanicLevel)
	os.Setenv("ARGOCD_LOG_LEVEL", "panic")
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: appset-oracle DIR")
		os.Exit(2)
	}
	if err := pathspecs(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cases, err := filepath.Glob(filepath.Join(os.Args[1], "*.case.yaml"))
	if err != nil || len(cases) == 0 {
		fmt.Fprintln(os.Stderr, "no *.case.yaml in", os.Args[1])
		os.Exit(1)
	}
	for _, c := range cases {
		w, err := run(c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", c, err)
			os.Exit(1)
		}
		w.Oracle = oracleVersion()
		data, _ := json.MarshalIndent(w, "", "  ")
		out := strings.TrimSuffix(c, ".case.yaml") + ".want.json"
		if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d applications %s\n", out, len(w.Applications), w.Error)
	}
}

// oracleVersion names the argo-cd module this program was built with.
func oracleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/argoproj/argo-cd/v3" {
				return d.Path + " " + d.Version
			}
		}
	}
	return "github.com/argoproj/argo-cd/v3"
}

func run(path string) (*want, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tc testCase
	if err := yaml.UnmarshalStrict(data, &tc); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(tc.AppSet)
	var appSet v1alpha1.ApplicationSet
	if err := json.Unmarshal(raw, &appSet); err != nil {
		return nil, fmt.Errorf("appSet: %w", err)
	}
	repo, err := os.MkdirTemp("", "oracle-repo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(repo)
	if err := makeRepo(repo, tc.Files); err != nil {
		return nil, err
	}
	c, err := fakeClient(tc.Clusters, &appSet)
	if err != nil {
		return nil, err
	}
	gitClient, err := git.NewClientExt("file://"+repo, repo, git.NopCreds{}, true, false, "", "")
	if err != nil {
		return nil, err
	}
	repos := &localRepos{root: repo, git: gitClient, newGlobbing: tc.NewGitFileGlobbing}
	apps, _, err := template.GenerateApplications(log.NewEntry(log.StandardLogger()), appSet, allGenerators(c, repos), &utils.Render{}, c)
	w := &want{Applications: []map[string]any{}}
	if err != nil {
		w.Error = err.Error()
		return w, nil
	}
	for _, app := range apps {
		app.TypeMeta = metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Application"}
		b, err := json.Marshal(app)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
			delete(md, "creationTimestamp")
		}
		w.Applications = append(w.Applications, m)
	}
	// The controller's order of clusters and of merged parameter sets is a map's:
	// sort by the Application's JSON.
	sort.SliceStable(w.Applications, func(i, j int) bool {
		a, _ := json.Marshal(w.Applications[i])
		b, _ := json.Marshal(w.Applications[j])
		return string(a) < string(b)
	})
	return w, nil
}

// makeRepo writes the files into a new git repository and commits them, so that
// git ls-files lists them as the repo-server's does.
func makeRepo(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=oracle", "-c", "user.email=oracle@localhost", "commit", "-q", "--allow-empty", "-m", "case"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	return nil
}

// fakeClient holds the cluster Secrets and the AppProjects the git generator reads.
func fakeClient(clusters []cluster, appSet *v1alpha1.ApplicationSet) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	var objs []client.Object
	for i, c := range clusters {
		labels := map[string]string{"argocd.argoproj.io/secret-type": "cluster"}
		for k, v := range c.Labels {
			labels[k] = v
		}
		data := map[string][]byte{"name": []byte(c.Name), "server": []byte(c.Server)}
		if c.Project != "" {
			data["project"] = []byte(c.Project)
		}
		objs = append(objs, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cluster-%02d", i), Namespace: namespace, Labels: labels, Annotations: c.Annotations},
			Data:       data,
		})
	}
	projects := map[string]bool{"default": true}
	if p := appSet.Spec.Template.Spec.Project; p != "" && !strings.Contains(p, "{{") {
		projects[p] = true
	}
	for p := range projects {
		objs = append(objs, &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: p, Namespace: namespace}})
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), nil
}

// allGenerators is the controller's generator set (generators.GetGenerators) with the
// generators that call APIs left out.
func allGenerators(c client.Client, repos *localRepos) map[string]generators.Generator {
	terminal := map[string]generators.Generator{
		"List":     generators.NewListGenerator(),
		"Clusters": generators.NewClusterGenerator(c, namespace),
		"Git":      generators.NewGitGenerator(repos, namespace),
	}
	nested := map[string]generators.Generator{
		"List":     terminal["List"],
		"Clusters": terminal["Clusters"],
		"Git":      terminal["Git"],
		"Matrix":   generators.NewMatrixGenerator(terminal),
		"Merge":    generators.NewMergeGenerator(terminal),
	}
	return map[string]generators.Generator{
		"List":     terminal["List"],
		"Clusters": terminal["Clusters"],
		"Git":      terminal["Git"],
		"Matrix":   generators.NewMatrixGenerator(nested),
		"Merge":    generators.NewMergeGenerator(nested),
	}
}

// localRepos answers the git generator as the repo-server does, from a local
// repository: files by argo-cd's own git client (git ls-files, or doublestar with
// the new globbing), directories by walking the checkout without hidden ones.
type localRepos struct {
	root        string
	git         git.Client
	newGlobbing bool
}

func (r *localRepos) GetFiles(_ context.Context, _, _, _, pattern string, _ bool, _ *v1alpha1.SourceIntegrity) (map[string][]byte, error) {
	if pattern == "" {
		pattern = "."
	}
	files, err := r.git.LsFiles(pattern, r.newGlobbing)
	if err != nil {
		return nil, err
	}
	res := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(r.root, f))
		if err != nil {
			return nil, err
		}
		res[f] = data
	}
	return res, nil
}

func (r *localRepos) GetDirectories(_ context.Context, _, _, _ string, _ bool, _ *v1alpha1.SourceIntegrity) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(r.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(r.root, p)
		if err != nil || rel == "." {
			return err
		}
		paths = append(paths, rel)
		return nil
	})
	return paths, err
}

// pathspecCases are patterns to list with git ls-files over one set of files.
type pathspecCases struct {
	Files    []string `json:"files"`
	Patterns []string `json:"patterns"`
}

// pathspecs writes DIR/pathspec.want.json: for each pattern of DIR/pathspec.yaml,
// the files argo-cd's git client (git ls-files) lists, or its error.
func pathspecs(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "pathspec.yaml"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var pc pathspecCases
	if err := yaml.UnmarshalStrict(data, &pc); err != nil {
		return err
	}
	repo, err := os.MkdirTemp("", "oracle-pathspec-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(repo)
	files := map[string]string{}
	for _, f := range pc.Files {
		files[f] = "{}\n"
	}
	if err := makeRepo(repo, files); err != nil {
		return err
	}
	gitClient, err := git.NewClientExt("file://"+repo, repo, git.NopCreds{}, true, false, "", "")
	if err != nil {
		return err
	}
	version, _ := exec.Command("git", "version").Output()
	type result struct {
		Pattern string   `json:"pattern"`
		Files   []string `json:"files"`
		Error   bool     `json:"error,omitempty"`
	}
	out := struct {
		Oracle  string   `json:"oracle"`
		Git     string   `json:"git"`
		Results []result `json:"results"`
	}{Oracle: oracleVersion(), Git: strings.TrimSpace(string(version))}
	for _, p := range pc.Patterns {
		listed, err := gitClient.LsFiles(p, false)
		r := result{Pattern: p, Files: listed, Error: err != nil}
		if r.Files == nil {
			r.Files = []string{}
		}
		sort.Strings(r.Files)
		out.Results = append(out.Results, r)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Printf("pathspec.want.json: %d patterns\n", len(out.Results))
	return os.WriteFile(filepath.Join(dir, "pathspec.want.json"), append(b, '\n'), 0o644)
}

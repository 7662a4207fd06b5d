package main

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The dry-run cache's tests run one after the other (t.Setenv points DRIFT_CACHE_DIR
// at each test's own directory). Each compares a run that may answer from the cache
// with one that may not (--no-cache), after a change to one part of what decides an
// answer: the two reports must be the same, byte for byte once the values the server
// makes up for every dry run of a new object are masked (sanitize: its uid and
// creationTimestamp differ between any two runs, cached or not).

// cacheCounts are the answers a run took from the cache and the requests it sent,
// from its stderr.
var cacheLine = regexp.MustCompile(`dry-run cache: (\d+) answered from the cache, (\d+) sent`)

func cacheCounts(t *testing.T, o outcome) (hits, sent int) {
	t.Helper()
	m := cacheLine.FindStringSubmatch(o.stderr)
	if m == nil {
		return 0, 0
	}
	hits, _ = strconv.Atoi(m[1])
	sent, _ = strconv.Atoi(m[2])
	return hits, sent
}

// cacheDir points the runs of t at a cache of their own, which stores answers however
// recently the cluster's admission configuration, RBAC or CRDs changed (other tests
// change them all the time; TestCacheFollowsAdmission tests the wait).
func cacheDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("DRIFT_CACHE_DIR", dir)
	t.Setenv("DRIFT_CACHE_SETTLE", "0s")
	return dir
}

// entries are the packs of answers stored in a cache directory.
func entries(dir string) []string {
	var out []string
	for _, p := range cacheFiles(dir) {
		if strings.HasSuffix(p, ".pack") && !strings.Contains(p, "/renders/") {
			out = append(out, p)
		}
	}
	return out
}

// cacheFiles are every file of a cache directory: packs, the clusters' records, what
// discovery read.
func cacheFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// sameAsUncached runs drift with args twice, from the cache and with --no-cache, and
// fails t unless both print the same report with the same exit code. It returns the
// cached run.
func sameAsUncached(t *testing.T, args ...string) outcome {
	t.Helper()
	cached := drift(t, args...)
	fresh := drift(t, append(args, "--no-cache")...)
	if cached.code != fresh.code || sanitize(cached.stdout) != sanitize(fresh.stdout) {
		t.Fatalf("from the cache (exit %d):\n%s\nwithout it (exit %d):\n%s\nstderr:\n%s", cached.code, cached.stdout, fresh.code, fresh.stdout, cached.stderr)
	}
	if strings.Contains(fresh.stderr, "dry-run cache:") {
		t.Errorf("--no-cache used the cache:\n%s", fresh.stderr)
	}
	return cached
}

// A repeat run answers from the cache what did not change, and every part of what
// decides an answer, changed, is sent again: the live object, the rendered body, the
// applier, the field manager, forcing conflicts.
func TestCacheAnswersARepeatRunAndNothingStale(t *testing.T) {
	cacheDir(t)
	ns := namespace(t)
	// A Service's numbers too: an answer from the cache must decode them as the
	// server's own answer decodes (whole numbers as int64), or an unchanged port
	// reads as changed.
	svc := func(target string) string {
		return sub("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: NS}\nspec: {selector: {app: web}, ports: [{port: 80, targetPort: "+target+"}]}\n", ns)
	}
	apply(t, "kubectl", cm(ns, "a", "blue")+"---\n"+cm(ns, "b", "blue")+"---\n"+svc("8081"))
	r := repo(t, map[string]string{"a.yaml": cm(ns, "a", "green"), "b.yaml": cm(ns, "b", "blue"), "c.yaml": cm(ns, "c", "red"), "svc.yaml": svc("8082")})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main"}

	first := drift(t, args...)
	if h, s := cacheCounts(t, first); first.code != 1 || h != 0 || s != 4 {
		t.Fatalf("first run: exit %d, %d from the cache, %d sent\n%s", first.code, h, s, first.stderr)
	}
	again := sameAsUncached(t, args...)
	if h, s := cacheCounts(t, again); h != 4 || s != 0 {
		t.Fatalf("repeat run: %d from the cache, %d sent\n%s", h, s, again.stderr)
	}
	asJSON := sameAsUncached(t, append(append([]string{}, args...), "-o", "json")...)
	if !strings.Contains(asJSON.stdout, `"what": "spec.ports[port=80].targetPort 8081 → 8082"`) {
		t.Errorf("the Service's change is not the targetPort alone:\n%s", asJSON.stdout)
	}

	// The live object edited (by drift's own field manager, so that no conflict, an
	// error and never cached, is in the way): its answer is sent again, and shows
	// the edit.
	apply(t, "kubectl", cm(ns, "b", "purple"))
	edited := sameAsUncached(t, args...)
	if h, s := cacheCounts(t, edited); h != 3 || s != 1 || !strings.Contains(edited.stdout, "purple") {
		t.Errorf("live edit: %d from the cache, %d sent\n%s\n%s", h, s, edited.stdout, edited.stderr)
	}

	// The rendered body changed.
	if _, err := r.CommitFiles(map[string]string{"a.yaml": cm(ns, "a", "yellow")}, "yellow"); err != nil {
		t.Fatal(err)
	}
	body := sameAsUncached(t, args...)
	if h, s := cacheCounts(t, body); h != 3 || s != 1 || !strings.Contains(body.stdout, "yellow") {
		t.Errorf("new body: %d from the cache, %d sent\n%s", h, s, body.stderr)
	}

	// Another applier, another field manager: nothing answered for another.
	// Forced: the forced requests are sent (an identical request, such as the
	// creation of c, may share its answer).
	for _, c := range []struct {
		extra   []string
		maxHits int
	}{{[]string{"--applier", "kubectl"}, 0}, {[]string{"--field-manager", "ci"}, 0}, {[]string{"--force-conflicts"}, 1}} {
		o := sameAsUncached(t, append(append([]string{}, args...), c.extra...)...)
		if h, s := cacheCounts(t, o); h > c.maxHits || s < 2 {
			t.Errorf("%v: %d from the cache, %d sent\n%s", c.extra, h, s, o.stderr)
		}
	}
}

// discoveryDocuments are the answers to the requests for the API server's
// discovery documents (/api, /apis) a run at -v=6 logged, by status.
var discoveryDocuments = regexp.MustCompile(`"GET" url="https?://[^/"]+/apis?(\?[^"]*)?" status="([^"]*)"`)

func discoveryStatuses(stderr string) []string {
	var out []string
	for _, m := range discoveryDocuments.FindAllStringSubmatch(stderr, -1) {
		out = append(out, m[2])
	}
	sort.Strings(out)
	return out
}

// A run keeps the cluster's API discovery; the next asks for it with its ETags, is
// sent none of it (304 Not Modified) and reports the same. A CRD created in between
// is seen: that run is sent /apis again.
func TestCacheKeepsTheAPIDiscovery(t *testing.T) {
	dir := cacheDir(t)
	ns := namespace(t)
	r := repo(t, map[string]string{"a.yaml": cm(ns, "a", "green")})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "-v=6"}
	first := drift(t, args...)
	kept, _ := filepath.Glob(filepath.Join(dir, "dryrun", "v*", "apis", "*.json"))
	if got := discoveryStatuses(first.stderr); len(kept) != 1 || !slices.Equal(got, []string{"200 OK", "200 OK"}) {
		t.Fatalf("first run: kept %v; discovery answered %v\n%s", kept, got, first.stderr)
	}
	again := sameAsUncached(t, args...)
	if got := discoveryStatuses(again.stderr); !slices.Equal(got, []string{"304 Not Modified", "304 Not Modified"}) {
		t.Errorf("the repeat run: discovery answered %v, want 304 twice", got)
	}
	apply(t, "kubectl", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.apis.drift.test}
spec:
  group: apis.drift.test
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`)
	// The server adds a CRD to its discovery a moment after it is created.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "api-resources", "--api-group", "apis.drift.test", "-o", "name").Output()
		if err == nil && strings.Contains(string(out), "gadgets.apis.drift.test") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server does not serve gadgets: %v %s", err, out)
		}
	}
	if got := discoveryStatuses(drift(t, args...).stderr); !slices.Equal(got, []string{"200 OK", "304 Not Modified"}) {
		t.Errorf("the run after a CRD was created: discovery answered %v, want /apis sent again", got)
	}
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.cache.drift.test}
spec:
  group: cache.drift.test
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: SIZE}
              color: {type: string}
`

// A custom resource's answer follows its CRD: the schema's default changed, the
// prediction holds the new one.
func TestCacheFollowsTheCRD(t *testing.T) {
	cacheDir(t)
	ns := namespace(t)
	apply(t, "kubectl", strings.ReplaceAll(widgetCRD, "SIZE", "1"))
	if out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "wait", "--for", "condition=established", "--timeout", "30s",
		"crd/widgets.cache.drift.test").CombinedOutput(); err != nil {
		t.Fatalf("kubectl wait: %v\n%s", err, out)
	}
	widget := sub("apiVersion: cache.drift.test/v1\nkind: Widget\nmetadata: {name: w, namespace: NS}\nspec: {color: blue}\n", ns)
	r := repo(t, map[string]string{"w.yaml": widget})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "-o", "json"}
	drift(t, args...)
	if h, _ := cacheCounts(t, sameAsUncached(t, args...)); h != 1 {
		t.Fatalf("the repeat run did not answer the widget from the cache")
	}
	apply(t, "kubectl", strings.ReplaceAll(widgetCRD, "SIZE", "7"))
	deadline := time.Now().Add(30 * time.Second)
	for {
		o := sameAsUncached(t, args...)
		if strings.Contains(o.stdout, `size: 7`) {
			if h, _ := cacheCounts(t, o); h != 0 {
				t.Errorf("the CRD changed, the widget was answered from the cache")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new default never showed:\n%s", o.stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// An admission policy added refuses what the cache answered before; a webhook that
// may see an object keeps it out of the cache, as its answers depend on what drift
// cannot key on.
func TestCacheFollowsAdmission(t *testing.T) {
	cacheDir(t)
	ns := namespace(t)
	r := repo(t, map[string]string{"a.yaml": cm(ns, "a", "blue")})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main"}
	drift(t, args...)
	if h, _ := cacheCounts(t, drift(t, args...)); h != 1 {
		t.Fatal("the repeat run did not answer from the cache")
	}

	// From here, answers are not stored for 2s after a change: the server applies a
	// new policy a moment after it stores it, and an answer given in between must
	// not be kept as the new policy's.
	t.Setenv("DRIFT_CACHE_SETTLE", "2s")
	policy := sub(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: cache-NS}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "object.data.color != 'blue'"
    message: "blue is refused in NS"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: cache-NS}
spec:
  policyName: cache-NS
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}
`, ns)
	apply(t, "kubectl", policy)
	t.Cleanup(func() {
		deleteAll(t, "validatingadmissionpolicybindings", "cache-"+ns)
		deleteAll(t, "validatingadmissionpolicies", "cache-"+ns)
	})
	// At once, most likely before the server applies the policy: whatever it answers
	// is not stored under the new configuration.
	drift(t, args...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		o := drift(t, append(args, "--no-cache")...)
		if o.code == 2 && strings.Contains(o.stdout, "blue is refused in "+ns) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policy never refused the object: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if o := sameAsUncached(t, args...); o.code != 2 {
		t.Fatalf("the policy refuses the object, the cached run does not:\n%s", o.stdout)
	}

	// A webhook (failing open) for this namespace's ConfigMaps: they are sent every
	// time, and the run says why.
	srv := webhookServer(t)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	apply(t, "kubectl", fmt.Sprintf("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: cache-%s}\nwebhooks:\n"+
		"  - name: allow.drift.test\n    clientConfig: {url: %q, caBundle: %s}\n    admissionReviewVersions: [v1]\n    sideEffects: None\n    failurePolicy: Ignore\n"+
		"    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %s}}\n"+
		"    rules:\n    - {apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}\n", ns, srv.URL+"/validate", ca, ns))
	t.Cleanup(func() { deleteAll(t, "validatingwebhookconfigurations", "cache-"+ns) })
	deleteAll(t, "validatingadmissionpolicybindings", "cache-"+ns)
	if _, err := r.CommitFiles(map[string]string{"a.yaml": cm(ns, "a", "green")}, "green"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		o := sameAsUncached(t, args...)
		if h, _ := cacheCounts(t, o); h != 0 || !strings.Contains(o.stderr, "1 because a webhook or a policy with parameters intercepts it") {
			t.Errorf("run %d: %d from the cache\n%s", i, h, o.stderr)
		}
	}
}

// Two clusters holding objects of the same names: the second's run answers nothing
// from what the first's stored.
func TestCacheKeepsClustersApart(t *testing.T) {
	cacheDir(t)
	beta := secondServer(t)
	ns := namespace(t)
	applyTo(t, beta.Config, "kubectl", "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	apply(t, "kubectl", cm(ns, "a", "blue"))
	applyTo(t, beta.Config, "kubectl", cm(ns, "a", "blue"))
	r := repo(t, map[string]string{"a.yaml": cm(ns, "a", "green")})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main"}
	drift(t, args...)
	if h, _ := cacheCounts(t, drift(t, args...)); h != 1 {
		t.Fatal("the repeat run on the first cluster did not answer from the cache")
	}
	o := runDrift(append(args, "--kubeconfig", beta.Kubeconfig)...)
	if h, s := cacheCounts(t, o); h != 0 || s != 1 {
		t.Errorf("the second cluster: %d from the cache, %d sent\n%s", h, s, o.stderr)
	}
}

// A cache written by another drift, a corrupt or truncated pack, and a cache
// directory that cannot be written: each is said once and never changes the report.
func TestCacheDamageIsNeverAnAnswer(t *testing.T) {
	dir := cacheDir(t)
	ns := namespace(t)
	apply(t, "kubectl", cm(ns, "a", "blue")+"---\n"+cm(ns, "b", "blue"))
	r := repo(t, map[string]string{"a.yaml": cm(ns, "a", "green"), "b.yaml": cm(ns, "b", "blue")})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main"}
	want := drift(t, append(args, "--no-cache")...)
	drift(t, args...)
	packs := entries(dir)
	if len(packs) != 1 {
		t.Fatalf("%d files stored, want one pack: %v", len(packs), packs)
	}
	pristine, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := cacheCounts(t, drift(t, args...)); h != 2 {
		t.Fatalf("the pack as written answered %d, want 2", h)
	}
	for _, c := range []struct {
		name, note string
		hits       int
		damage     func([]byte) []byte
	}{
		{"truncated", "cannot be read (truncated)", 0, func(d []byte) []byte { return d[:len(d)*2/3] }},
		// One answer's byte flipped: that answer is not used, the other is.
		{"an answer's byte flipped", "does not match its MAC", 1, func(d []byte) []byte {
			i := strings.Index(string(d), `"kind":"ConfigMap"`)
			d[i+2] ^= 1
			return d
		}},
		{"another build", "another build of drift wrote", 0, func(d []byte) []byte {
			// The build's name follows the magic, the format and its length.
			d[len("drift-resultcache-pack\n")+8] ^= 1
			return d
		}},
	} {
		for _, p := range entries(dir) {
			os.Remove(p)
		}
		if err := os.WriteFile(packs[0], c.damage(append([]byte(nil), pristine...)), 0o600); err != nil {
			t.Fatal(err)
		}
		o := drift(t, args...)
		if sanitize(o.stdout) != sanitize(want.stdout) || o.code != want.code {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, o.stdout, want.stdout)
		}
		if h, _ := cacheCounts(t, o); h != c.hits || strings.Count(o.stderr, c.note) != 1 {
			t.Errorf("%s: %d from the cache, want %d and one note %q\n%s", c.name, h, c.hits, c.note, o.stderr)
		}
	}

	// A cache directory under a file: nothing is kept, the run says so once.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DRIFT_CACHE_DIR", filepath.Join(file, "cache"))
	o := drift(t, args...)
	if sanitize(o.stdout) != sanitize(want.stdout) || o.code != want.code || strings.Count(o.stderr, "cannot be written") != 1 {
		t.Errorf("unwritable cache: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
}

// No Secret value is cached in any form: not the Secret's own (rendered, or only in
// the live Secret), not one copied into a ConfigMap. The entries hold their hashes,
// and the repeat run restores them from what it sends and reads.
func TestCacheHoldsNoSecretValue(t *testing.T) {
	dir := cacheDir(t)
	ns := namespace(t)
	const pw, livePw = "cache-s3cret-pa55word-4711", "live-only-s3cret-0815"
	apply(t, "kubectl", sub("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: NS}\nstringData: {password: old-"+pw+", token: "+livePw+"}\n", ns))
	r := repo(t, map[string]string{
		"secret.yaml": secret(ns, "db", pw),
		"new.yaml":    secret(ns, "new", pw+"-new"),
		"copy.yaml":   sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: copy, namespace: NS}\ndata: {dsn: 'postgres://app:"+pw+"@db/app', password: "+pw+"}\n", ns),
	})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "-o", "json"}
	drift(t, args...)
	again := sameAsUncached(t, args...)
	if h, _ := cacheCounts(t, again); h != 3 {
		t.Fatalf("the Secrets and the ConfigMap were not all answered from the cache:\n%s", again.stderr)
	}
	// --show-secrets tells the scrubber no value to hide: the cache stays out of it.
	if shown := drift(t, append(args, "--show-secrets")...); strings.Contains(shown.stderr, "dry-run cache:") || !strings.Contains(shown.stdout, pw) {
		t.Errorf("--show-secrets used the cache or hid the Secret:\n%s", shown.stderr)
	}
	var forms []string
	for _, v := range []string{pw, "old-" + pw, pw + "-new", livePw, "postgres://app:" + pw} {
		forms = append(forms, v, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	if stored := entries(dir); len(stored) != 2 {
		t.Fatalf("stored %v, want the two runs' packs", stored)
	}
	for _, p := range cacheFiles(dir) {
		data, _ := os.ReadFile(p)
		for _, f := range forms {
			if strings.Contains(string(data), f) {
				t.Errorf("%s holds %q", p, f)
			}
		}
	}
	for _, f := range forms {
		if strings.Contains(again.stdout, f) {
			t.Errorf("the report shows %q", f)
		}
	}
}

// drift cache prune bounds the cache's size (internal/resultcache tests which packs
// go first); 0 empties it.
func TestCachePrune(t *testing.T) {
	dir := cacheDir(t)
	ns := namespace(t)
	r := repo(t, map[string]string{"a.yaml": cm(ns, "a", "blue"), "b.yaml": cm(ns, "b", "blue")})
	drift(t, "diff", "--repo", r.Dir, "--ref", "main")
	o := drift(t, "cache", "prune", "--max-size", "0")
	// The run's pack of answers and its pack of renderings, the cluster's record and
	// its API discovery, what discovery read.
	if o.code != 0 || !strings.Contains(o.stdout, "removed 5 files") || !strings.Contains(o.stdout, "; 0 left in") {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "dryrun")); err != nil {
		t.Errorf("the cache directory itself was removed: %v", err)
	}
	if o := drift(t, "cache", "prune", "--max-size", "lots"); o.code != 2 || !strings.Contains(o.stderr, "--max-size") {
		t.Errorf("a bad size: exit %d %s", o.code, o.stderr)
	}
}

// deleteAll deletes a cluster-scoped admissionregistration object by resource and name.
func deleteAll(t *testing.T, resource, name string) {
	t.Helper()
	out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "delete", resource+".admissionregistration.k8s.io", name, "--ignore-not-found").CombinedOutput()
	if err != nil {
		t.Errorf("delete %s %s: %v\n%s", resource, name, err, out)
	}
}

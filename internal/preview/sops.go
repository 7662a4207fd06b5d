package preview

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/sopsdoc"
	"github.com/drift-gitops/drift/internal/source"
)

// decrypted is a render of t in snap with its SOPS-encrypted Secrets as the Flux
// Kustomization that applies it decrypts them (its spec.decryption, sopsdoc):
// decrypted with the runner's keys, every value told to the scrubber first; or,
// when no key of the runner's decrypts one, opaque: its values left out, noted as
// not compared, and, previewing the head, whether its encrypted document differs
// from the base's (Note.Changed). A document SOPS cannot read is the object's
// failure. res is the target's own copy.
func (r *runner) decrypted(res *render.Result, snap *source.Snapshot, t *Target, spec render.Spec) {
	var base map[object.Key]string
	kept := res.Objects[:0]
	for _, o := range res.Objects {
		obj := o.Get()
		fromEnv := sopsdoc.FromEncryptedEnv(obj)
		if !sopsdoc.Encrypted(obj) && !fromEnv {
			kept = append(kept, o)
			continue
		}
		var plain *unstructured.Unstructured
		var err error
		if fromEnv {
			// Generated from an env file no key decrypted before the build.
			err = fmt.Errorf("its secretGenerator's env file: %w (%s)", sopsdoc.ErrNoKey, sopsRecipients(obj))
		} else {
			plain, err = sopsdoc.Decrypt(obj)
		}
		switch {
		case err == nil:
			if r.deps.Secrets != nil {
				r.deps.Secrets(plain)
			}
			o = o.With(plain)
		case errors.Is(err, sopsdoc.ErrNoKey):
			changed := false
			if snap == r.head && r.base != nil && !t.New {
				if base == nil {
					base = r.encryptedInBase(t, spec)
				}
				doc, _ := obj.MarshalJSON()
				was, ok := base[o.ID().Key()]
				changed = !ok || was != string(doc)
			}
			o = opaque(o, err, changed)
		default:
			id := o.ID()
			res.Failures = append(res.Failures, render.Failure{Source: o.Source, Doc: o.Doc, Item: o.Item, ID: &id, Reason: reason.Invalid,
				Message: fmt.Sprintf("%s cannot be decrypted as kustomize-controller decrypts it (spec.decryption.provider: sops): %v", id.Display(), err)})
			continue
		}
		kept = append(kept, o)
	}
	res.Objects = kept
}

// encryptedInBase are the encrypted Secrets the base renders for t, as written, by
// key: what a head's encrypted Secret is compared with when no key decrypts it.
func (r *runner) encryptedInBase(t *Target, spec render.Spec) map[object.Key]string {
	out := map[object.Key]string{}
	if r.base.CheckPaths([]string{t.basePath(true)}) != nil {
		return out
	}
	// The base's encrypted documents as written: not the head's decrypted files.
	spec.Overlay, spec.Overlaid = nil, ""
	if len(t.BaseSpecs) > 0 {
		spec = t.completeSpec(t.BaseSpecs[0], t.conn)
	}
	res, err := r.deps.Cache.RenderSnapshot(r.base, spec)
	if err != nil {
		return out
	}
	for _, o := range res.Objects {
		if obj := o.Get(); sopsdoc.Encrypted(obj) || sopsdoc.FromEncryptedEnv(obj) {
			doc, _ := obj.MarshalJSON()
			out[o.ID().Key()] = string(doc)
		}
	}
	return out
}

// opaque is an encrypted Secret no key decrypts, as drift previews it: without its
// sops field and with every value left empty, so that no ciphertext is sent or
// shown; its note says why and names the keys that decrypt it.
func opaque(o render.Object, err error, changed bool) render.Object {
	obj := o.Get().DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "sops")
	fromEnv := sopsdoc.FromEncryptedEnv(obj)
	for _, field := range []string{"data", "stringData"} {
		if m, ok, _ := unstructured.NestedMap(obj.Object, field); ok {
			for k := range m {
				m[k] = ""
				if fromEnv && strings.HasPrefix(k, "sops_") {
					delete(m, k) // SOPS' metadata, which decryption removes
				}
			}
			_ = unstructured.SetNestedMap(obj.Object, m, field)
		}
	}
	o = o.With(obj)
	what := "its encrypted document is the base's"
	if changed {
		what = "its encrypted document changes"
	}
	o.Notes = append(append([]render.Note(nil), o.Notes...), render.Note{Reason: reason.Encrypted, Changed: changed, Message: fmt.Sprintf(
		"encrypted with SOPS and not decrypted (%v): its values are not compared, %s; give drift the key through SOPS_AGE_KEY or SOPS_AGE_KEY_FILE (docs/flux.md#sops) to compare them", err, what)})
	return o
}

// operatorFilled notes the ConfigMaps and Secrets of a ResourceSet's render that
// flux-operator fills before applying them (their copyFrom annotation): the dry run
// fills them as it does, from the cluster (dryrun.fillFromCluster).
func operatorFilled(res *render.Result) {
	for i, o := range res.Objects {
		obj := o.Get()
		from, ok := obj.GetAnnotations()[dryrun.CopyFromAnnotation]
		if !ok || obj.GetAPIVersion() != "v1" || (obj.GetKind() != "ConfigMap" && obj.GetKind() != "Secret") {
			continue
		}
		c := o.With(obj)
		c.Notes = append(append([]render.Note(nil), o.Notes...), render.Note{Reason: reason.OperatorFilled,
			Message: fmt.Sprintf("flux-operator copies its data from %s %s before applying it", obj.GetKind(), from)})
		res.Objects[i] = c
	}
}

// requiredKeys are the keys the API server requires of a Secret of each type.
var requiredKeys = map[string][]string{
	"kubernetes.io/dockerconfigjson": {".dockerconfigjson"},
	"kubernetes.io/dockercfg":        {".dockercfg"},
	"kubernetes.io/tls":              {"tls.crt", "tls.key"},
	"kubernetes.io/basic-auth":       {"username"},
	"kubernetes.io/ssh-auth":         {"ssh-privatekey"},
}

// seedable is an operator-filled Secret as an ephemeral server can hold it: the
// keys its type requires, with empty values ("{}" where JSON is required), so that
// the base loads and the head's copy is compared with it.
func seedable(o render.Object) render.Object {
	obj := o.Get()
	if _, ok := dryrun.FilledNote(o); !ok || obj.GetKind() != "Secret" {
		return o
	}
	t, _, _ := unstructured.NestedString(obj.Object, "type")
	keys := requiredKeys[t]
	if len(keys) == 0 {
		return o
	}
	c := obj.DeepCopy()
	data, _, _ := unstructured.NestedStringMap(c.Object, "stringData")
	if data == nil {
		data = map[string]string{}
	}
	for _, k := range keys {
		if _, ok := data[k]; !ok {
			data[k] = ""
			if k == ".dockerconfigjson" || k == ".dockercfg" {
				data[k] = "{}"
			}
		}
	}
	_ = unstructured.SetNestedStringMap(c.Object, data, "stringData")
	return o.With(c)
}

// decryptSources decrypts, with the runner's keys, the files the secretGenerators of
// a Flux Kustomization's build read (files and envs) and its patch files that are SOPS
// documents, before
// the build, as kustomize-controller's DecryptSources does: the kustomization file at
// spec.Path and those of the directories its resources and components name,
// recursively, inside the repository. Every decrypted value is told to the scrubber
// first. A file no key decrypts is left as written (its Secret is then opaque:
// decrypted); one SOPS cannot read is a failure naming it.
func (r *runner) decryptSources(snap *source.Snapshot, spec *render.Spec) []render.Failure {
	o := newOverlay()
	var failures []render.Failure
	walkKustomizations(snap.FS, spec.Path, func(dir, file string, _ []byte, k *kustypes.Kustomization) {
		decryptOne := func(ref string, env, patch bool) {
			p, ok := inRepo(dir, ref)
			if !ok || o.files[p] != "" {
				return
			}
			data, err := fs.ReadFile(snap.FS, p)
			if err != nil {
				return // the build says it is missing
			}
			if len(data) > maxEncryptedFileSize {
				failures = append(failures, render.Failure{Source: p, Reason: reason.Invalid, Message: fmt.Sprintf(
					"%s (read by %s) is %d bytes: kustomize-controller decrypts no file larger than %d bytes, so neither does drift", p, file, len(data), maxEncryptedFileSize)})
				return
			}
			decrypt := func(p string, data []byte) ([]byte, []string, error) { return sopsdoc.DecryptSource(p, data, env) }
			if patch {
				decrypt = sopsdoc.DecryptPatch
			}
			plain, values, err := decrypt(p, data)
			switch {
			case errors.Is(err, sopsdoc.ErrNoKey) || plain == nil && err == nil:
				return
			case err != nil:
				failures = append(failures, render.Failure{Source: p, Reason: reason.Invalid,
					Message: fmt.Sprintf("%s (read by %s) cannot be decrypted as kustomize-controller decrypts it (spec.decryption.provider: sops): %v", p, file, err)})
				return
			}
			values = slices.DeleteFunc(values, func(v string) bool { return v == "" })
			if len(values) > 0 {
				sd := map[string]any{}
				for i, v := range values {
					sd[fmt.Sprint(i)] = v
				}
				r.deps.Secrets(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "stringData": sd}})
			}
			o.replace(p, data, string(plain))
		}
		for _, gen := range k.SecretGenerator {
			for _, src := range gen.FileSources {
				_, file, found := strings.Cut(src, "=")
				if !found {
					file = src
				}
				decryptOne(file, false, false)
			}
			for _, env := range gen.EnvSources {
				decryptOne(env, true, false)
			}
			if gen.EnvSource != "" {
				decryptOne(gen.EnvSource, true, false)
			}
		}
		for _, patch := range k.Patches {
			if patch.Path != "" && !strings.Contains(patch.Path, "://") {
				decryptOne(patch.Path, false, true)
			}
		}
	})
	o.set(spec)
	return failures
}

// maxEncryptedFileSize is the largest file kustomize-controller decrypts before the
// build (its decryptor's maxEncryptedFileSize).
const maxEncryptedFileSize = 5 << 20

// ksopsSources reads the KSOPS generators of a kustomize target that is not Flux's
// (an Argo CD Application's, a drift.yaml target's), which drift does not run: each
// kustomization file whose generators name a KSOPS configuration (apiVersion
// viaduct.ai/v1, kind ksops) is built with the files that configuration lists as
// resources instead, and the target's SOPS-encrypted Secrets are then decrypted with
// the runner's keys as for a Flux Kustomization (spec.Decrypt). notes name each
// generator read so.
func ksopsSources(fsys fs.FS, spec *render.Spec) (notes []string, failures []render.Failure) {
	o := newOverlay()
	walkKustomizations(fsys, spec.Path, func(dir, file string, raw []byte, k *kustypes.Kustomization) {
		var doc map[string]any
		if len(k.Generators) == 0 || yaml.Unmarshal(raw, &doc) != nil {
			return
		}
		var kept, added []any
		for _, g := range k.Generators {
			p, ok := inRepo(dir, g)
			data, err := fs.ReadFile(fsys, p)
			var gen struct {
				APIVersion string   `json:"apiVersion"`
				Kind       string   `json:"kind"`
				Files      []string `json:"files"`
				SecretFrom []any    `json:"secretFrom"`
			}
			if !ok || err != nil || yaml.Unmarshal(data, &gen) != nil || !strings.HasPrefix(gen.APIVersion, "viaduct.ai/") || gen.Kind != "ksops" {
				kept = append(kept, g)
				continue
			}
			if len(gen.SecretFrom) > 0 {
				failures = append(failures, render.Failure{Source: p, Reason: reason.RenderFailed, Message: fmt.Sprintf(
					"KSOPS generator %s has secretFrom, which drift does not read yet: the Secrets it makes are not previewed (list encrypted Secret manifests under files: instead)", p)})
			}
			for _, f := range gen.Files {
				added = append(added, f)
			}
			notes = append(notes, fmt.Sprintf("KSOPS generator %s: its files (%s) are built as resources and decrypted with the runner's SOPS keys, as KSOPS decrypts them (docs/argocd.md#sops-and-ksops)", p, strings.Join(gen.Files, ", ")))
			o.replace(p, data, "") // the digest only: the file itself is not read
			delete(o.files, p)
		}
		if len(added) == 0 {
			return
		}
		resources, _ := doc["resources"].([]any)
		doc["resources"] = append(resources, added...)
		if len(kept) > 0 {
			doc["generators"] = kept
		} else {
			delete(doc, "generators")
		}
		edited, err := yaml.Marshal(doc)
		if err == nil {
			o.replace(file, raw, string(edited))
		}
	})
	if len(o.files) > 0 {
		o.set(spec)
		spec.Decrypt = sopsdoc.Provider
	}
	return notes, failures
}

// overlay collects the files a build reads in place of the repository's
// (render.Spec.Overlay), and a digest of what they replace.
type overlay struct {
	files  map[string]string
	digest hash.Hash
}

func newOverlay() *overlay { return &overlay{files: map[string]string{}, digest: sha256.New()} }

func (o *overlay) replace(p string, was []byte, now string) {
	o.files[p] = now
	fmt.Fprintf(o.digest, "%s\x00%x\x00", p, sha256.Sum256(was))
}

// set gives spec the overlay, when it replaces anything.
func (o *overlay) set(spec *render.Spec) {
	if len(o.files) > 0 {
		spec.Overlay, spec.Overlaid = o.files, hex.EncodeToString(o.digest.Sum(nil))
	}
}

// walkKustomizations calls visit with the kustomization file of dir (a repository
// path) and of every directory its resources and components name, recursively, each
// once and inside the repository.
func walkKustomizations(fsys fs.FS, dir string, visit func(dir, file string, raw []byte, k *kustypes.Kustomization)) {
	visited := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		if visited[dir] {
			return
		}
		visited[dir] = true
		for _, name := range konfig.RecognizedKustomizationFileNames() {
			file := path.Join(dir, name)
			raw, err := fs.ReadFile(fsys, file)
			if err != nil {
				continue
			}
			var k kustypes.Kustomization
			if yaml.Unmarshal(raw, &k) != nil {
				return // the build says what is wrong with it
			}
			visit(dir, file, raw, &k)
			for _, ref := range append(append([]string(nil), k.Resources...), k.Components...) {
				if p, ok := inRepo(dir, ref); ok {
					if info, err := fs.Stat(fsys, p); err == nil && info.IsDir() {
						walk(p)
					}
				}
			}
			return
		}
	}
	walk(path.Clean(strings.TrimPrefix(dir, "./")))
}

// inRepo is ref, relative to dir, as a repository path; false when it leaves the
// repository or is absolute.
func inRepo(dir, ref string) (string, bool) {
	p := path.Join(dir, ref)
	return p, !path.IsAbs(ref) && p != ".." && !strings.HasPrefix(p, "../")
}

// sopsRecipients names the keys an env file's SOPS metadata, carried into its
// generated Secret, says decrypt it (its age recipients and PGP fingerprints).
func sopsRecipients(obj *unstructured.Unstructured) string {
	data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	var out []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if !strings.HasSuffix(k, "__map_recipient") && !strings.HasSuffix(k, "__map_fp") {
			continue
		}
		if b, err := base64.StdEncoding.DecodeString(data[k]); err == nil {
			out = append(out, string(b))
		}
	}
	if len(out) == 0 {
		return "no age or PGP key named"
	}
	return "it names " + strings.Join(out, ", ")
}

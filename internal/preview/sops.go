package preview

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
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
// a Flux Kustomization's build read (files and envs) that are SOPS documents, before
// the build, as kustomize-controller's DecryptSources does: the kustomization file at
// spec.Path and those of the directories its resources and components name,
// recursively, inside the repository. Every decrypted value is told to the scrubber
// first. A file no key decrypts is left as written (its Secret is then opaque:
// decrypted); one SOPS cannot read is a failure naming it.
func (r *runner) decryptSources(snap *source.Snapshot, spec *render.Spec) []render.Failure {
	out := map[string]string{}
	digest := sha256.New()
	var failures []render.Failure
	visited := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		if visited[dir] {
			return
		}
		visited[dir] = true
		var k kustypes.Kustomization
		file := ""
		for _, name := range konfig.RecognizedKustomizationFileNames() {
			if data, err := fs.ReadFile(snap.FS, path.Join(dir, name)); err == nil {
				file = path.Join(dir, name)
				if yaml.Unmarshal(data, &k) != nil {
					return // the build says what is wrong with it
				}
				break
			}
		}
		if file == "" {
			return
		}
		decryptOne := func(ref string, env bool) {
			p := path.Join(dir, ref)
			if path.IsAbs(ref) || p == ".." || strings.HasPrefix(p, "../") || out[p] != "" {
				return
			}
			data, err := fs.ReadFile(snap.FS, p)
			if err != nil {
				return // the build says it is missing
			}
			plain, values, err := sopsdoc.DecryptSource(p, data, env)
			switch {
			case errors.Is(err, sopsdoc.ErrNoKey) || plain == nil && err == nil:
				return
			case err != nil:
				failures = append(failures, render.Failure{Source: p, Reason: reason.Invalid,
					Message: fmt.Sprintf("%s (a secretGenerator's file in %s) cannot be decrypted as kustomize-controller decrypts it (spec.decryption.provider: sops): %v", p, file, err)})
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
			out[p] = string(plain)
			fmt.Fprintf(digest, "%s\x00%x\x00", p, sha256.Sum256(data))
		}
		for _, gen := range k.SecretGenerator {
			for _, src := range gen.FileSources {
				_, file, found := strings.Cut(src, "=")
				if !found {
					file = src
				}
				decryptOne(file, false)
			}
			for _, env := range gen.EnvSources {
				decryptOne(env, true)
			}
			if gen.EnvSource != "" {
				decryptOne(gen.EnvSource, true)
			}
		}
		for _, ref := range append(append([]string(nil), k.Resources...), k.Components...) {
			p := path.Join(dir, ref)
			if info, err := fs.Stat(snap.FS, p); err == nil && info.IsDir() && !strings.HasPrefix(p, "../") && p != ".." {
				visit(p)
			}
		}
	}
	visit(path.Clean(strings.TrimPrefix(spec.Path, "./")))
	if len(out) > 0 {
		spec.Overlay, spec.Overlaid = out, hex.EncodeToString(digest.Sum(nil))
	}
	return failures
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

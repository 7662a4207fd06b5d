package discover

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/sopsdoc"
)

// pool holds the objects the repository writes or its targets render that Argo CD
// and Flux objects refer to: Flux sources, and the ConfigMaps and Secrets of
// postBuild.substituteFrom and valuesFrom. A repository with a directory per cluster
// holds one such object several times, so a reference is resolved nearest first: in
// the render that holds the referring object, then in the paths searched, then
// anywhere, where two different definitions are an error.
type pool struct {
	objs  map[string][]render.Object
	order []string
	paths []string
	// root is the cluster root of a fleet the referring object belongs to ("":
	// none): its own definitions come before the other clusters'.
	root string
	// decrypted are the SOPS-encrypted Secrets data decrypted, each once (every
	// Kustomization of a home lab substitutes from the same one).
	decrypted map[*unstructured.Unstructured]decryption
	// encoded are objects' JSON, each encoded once, to compare one object's
	// definitions.
	encoded map[*unstructured.Unstructured]string
}

// decryption is an encrypted Secret decrypted, or why it cannot be.
type decryption struct {
	plain *unstructured.Unstructured
	err   error
}

func newPool(objs []render.Object, paths []string) *pool {
	p := &pool{objs: map[string][]render.Object{}, paths: paths}
	p.add(objs)
	return p
}

// pooled are the kinds references name: nothing else is kept.
var pooled = map[string]bool{"ConfigMap": true, "Secret": true, "GitRepository": true, "HelmRepository": true, "OCIRepository": true, "ResourceSetInputProvider": true, KindArtifactGenerator: true}

// add records objects met in the repository's files or in a render.
func (p *pool) add(objs []render.Object) {
	for _, o := range objs {
		if !pooled[o.Get().GetKind()] {
			continue
		}
		key := poolKey(o.Get().GetKind(), o.Get().GetNamespace(), o.Get().GetName())
		if len(p.objs[key]) == 0 {
			p.order = append(p.order, key)
		}
		p.objs[key] = append(p.objs[key], o)
	}
}

func poolKey(kind, ns, name string) string { return kind + "\x00" + ns + "\x00" + name }

// get finds an object by kind, namespace and name, nearest to near (the render the
// referring object came from).
func (p *pool) get(kind, ns, name string, near []render.Object) (render.Object, bool, error) {
	for _, o := range near {
		if o.Get().GetKind() == kind && o.Get().GetNamespace() == ns && o.Get().GetName() == name {
			return o, true, nil
		}
	}
	all := p.objs[poolKey(kind, ns, name)]
	for _, scope := range [][]string{{p.root}, p.paths} {
		if len(scope) == 0 || scope[0] == "" {
			continue
		}
		var in []render.Object
		for _, o := range all {
			if underAny(o.Source, scope) {
				in = append(in, o)
			}
		}
		if len(in) > 0 {
			all = in
		}
	}
	switch len(all) {
	case 0:
		return render.Object{}, false, nil
	case 1:
		return all[0], true, nil
	}
	first := p.encode(all[0].Get())
	var places []string
	for _, o := range all {
		places = append(places, o.Where())
		if p.encode(o.Get()) != first {
			return render.Object{}, true, fmt.Errorf("%s %s is defined differently in several places (%s): run drift on one cluster's directory with --path",
				kind, objectName(ns, name), strings.Join(places, ", ")+", "+o.Where())
		}
	}
	return all[0], true, nil
}

// encode is obj's JSON, encoded once.
func (p *pool) encode(obj *unstructured.Unstructured) string {
	if s, ok := p.encoded[obj]; ok {
		return s
	}
	if p.encoded == nil {
		p.encoded = map[*unstructured.Unstructured]string{}
	}
	b, _ := json.Marshal(obj.Object)
	p.encoded[obj] = string(b)
	return string(b)
}

// all are the objects of a kind in a namespace, each once (the first place it is
// met), in the order met.
func (p *pool) all(kind, ns string) []render.Object {
	var out []render.Object
	seen := map[string]bool{}
	for _, key := range p.order {
		objs := p.objs[key]
		if len(objs) == 0 || objs[0].Get().GetKind() != kind || objs[0].Get().GetNamespace() != ns || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, objs[0])
	}
	return out
}

// data is a ConfigMap's or Secret's data as strings (a Secret's decoded), and where
// it was found; ok is false when the repository holds no such object.
// A SOPS-encrypted Secret is decrypted with the runner's keys (sopsdoc), as the
// cluster holds it once the Kustomization that applies it has decrypted it; when
// none of them decrypts it, err is an *encryptedError.
func (p *pool) data(kind, ns, name string, near []render.Object) (map[string]string, render.Object, bool, error) {
	o, ok, err := p.get(kind, ns, name, near)
	if !ok || err != nil {
		return nil, o, ok, err
	}
	read := o
	if kind == "Secret" && sopsdoc.Encrypted(o.Get()) {
		if p.decrypted == nil {
			p.decrypted = map[*unstructured.Unstructured]decryption{}
		}
		dec, ok := p.decrypted[o.Get()]
		if !ok {
			dec.plain, dec.err = sopsdoc.Decrypt(o.Get())
			p.decrypted[o.Get()] = dec
		}
		plain, err := dec.plain, dec.err
		switch {
		case errors.Is(err, sopsdoc.ErrNoKey):
			return nil, o, false, &encryptedError{where: o.Where(), name: objectName(ns, name), keys: sopsdoc.RecipientsOf(o.Get()), keyNames: keysOf(o.Get())}
		case err != nil:
			return nil, o, false, fmt.Errorf("%s: Secret %s cannot be decrypted as kustomize-controller decrypts it: %w", o.Where(), objectName(ns, name), err)
		}
		read = o.With(plain)
	}
	out, err := dataOf(read)
	return out, o, err == nil, err
}

// placeholderPrefix starts the value drift gives each key of an encrypted Secret it
// cannot decrypt nor read from the cluster: no Secret value, so not scrubbed.
const placeholderPrefix = "sops-encrypted-"

// encryptedError is a SOPS-encrypted Secret of the repository that none of the
// runner's keys decrypts.
type encryptedError struct {
	where, name, keys string
	keyNames          []string
}

func (e *encryptedError) Error() string {
	return fmt.Sprintf("%s: Secret %s is encrypted with SOPS and none of the runner's keys decrypts it (%s)", e.where, e.name, e.keys)
}

// keysOf are the keys of a Secret's data and stringData, sorted.
func keysOf(obj *unstructured.Unstructured) []string {
	var out []string
	for _, field := range []string{"data", "stringData"} {
		m, _, _ := unstructured.NestedMap(obj.Object, field)
		for k := range m {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// dataOf is a ConfigMap's or Secret's data as strings (a Secret's decoded).
func dataOf(o render.Object) (map[string]string, error) {
	kind, ns, name := o.Get().GetKind(), o.Get().GetNamespace(), o.Get().GetName()
	out := map[string]string{}
	data, _ := o.Get().Object["data"].(map[string]any)
	for k, v := range data {
		s, _ := v.(string)
		if kind == "Secret" {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("%s: Secret %s key %s is not base64", o.Where(), objectName(ns, name), k)
			}
			s = string(b)
		}
		out[k] = s
	}
	if kind == "Secret" {
		sd, _ := o.Get().Object["stringData"].(map[string]any)
		for k, v := range sd {
			s, _ := v.(string)
			out[k] = s
		}
	}
	return out, nil
}

// underAny reports whether a repository file is under one of paths.
func underAny(file string, paths []string) bool {
	for _, p := range paths {
		p = strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
		if p == "" || p == "." || file == p || strings.HasPrefix(file, p+"/") {
			return true
		}
	}
	return false
}

// input finds a ConfigMap or Secret a definition reads (substituteFrom, valuesFrom):
// nearest in the repository, else in the cluster drift runs against, as the
// controller reads it there. file is the repository file that holds it ("" when
// the cluster does); missing says why it is found nowhere ("" when found).
//
// A SOPS-encrypted Secret no key of the runner's decrypts is read from the cluster,
// where the controller reads it, decrypted; without a cluster (an ephemeral run, drift
// targets) each of its keys is a placeholder, the same in both refs, and note says so.
func (d *discovery) input(kind, ns, name string) (data map[string]string, file, missing, note string, err error) {
	data, o, ok, err := d.pool.data(kind, ns, name, d.near)
	var enc *encryptedError
	switch {
	case errors.As(err, &enc) && d.opts.LiveObject != nil:
		live, lerr := d.opts.LiveObject(kind, ns, name)
		if lerr == nil && live != nil {
			data, err = dataOf(render.Object{Obj: live, Source: fmt.Sprintf("the cluster's %s %s", kind, objectName(ns, name))})
			return data, o.Source, "", fmt.Sprintf("%s is encrypted with SOPS in %s and none of the runner's keys decrypts it (%s): its values are read from the cluster, where the controller reads them", objectName(ns, name), o.Source, enc.keys), err
		}
		fallthrough
	case errors.As(err, &enc):
		data = map[string]string{}
		for _, k := range enc.keyNames {
			data[k] = placeholderPrefix + k
		}
		return data, o.Source, "", fmt.Sprintf("%s is encrypted with SOPS in %s and none of the runner's keys decrypts it (%s), nor can drift read it from the cluster: what it fills in is not compared (each postBuild variable from it is the placeholder sops-encrypted-KEY; valuesFrom leaves it out); give drift the key through SOPS_AGE_KEY or SOPS_AGE_KEY_FILE (docs/flux.md#sops)", objectName(ns, name), o.Source, enc.keys), nil
	case ok || err != nil:
		return data, o.Source, "", "", err
	}
	if d.opts.LiveObject == nil {
		return nil, "", fmt.Sprintf("%s %s, which the repository does not hold and drift cannot read from the cluster (an ephemeral run, or drift targets: run against the live cluster, or add it to the repository)", kind, objectName(ns, name)), "", nil
	}
	live, err := d.opts.LiveObject(kind, ns, name)
	if err != nil {
		return nil, "", "", "", fmt.Errorf("%s %s is not in the repository, and %w: %v", kind, objectName(ns, name), errLiveRead, err)
	}
	if live == nil {
		return nil, "", fmt.Sprintf("%s %s, which neither the repository nor the cluster holds", kind, objectName(ns, name)), "", nil
	}
	data, err = dataOf(render.Object{Obj: live, Source: fmt.Sprintf("the cluster's %s %s", kind, objectName(ns, name))})
	return data, "", "", "", err
}

// errLiveRead is what an error reading the cluster drift runs against wraps.
var errLiveRead = errors.New("reading it from the cluster failed")

// source finds a Flux source a Kustomization or HelmRelease names: nearest in the
// repository, else among drift.yaml's fluxSources, else in the cluster drift runs
// against (made there by bootstrap or a FluxInstance). ok is false when found
// nowhere; o.Source is "" for one the repository does not hold.
func (d *discovery) source(kind, ns, name string) (o render.Object, ok bool, err error) {
	if o, ok, err = d.pool.get(kind, ns, name, d.near); ok || err != nil {
		return o, ok, err
	}
	for _, s := range d.opts.Sources {
		if s.GetKind() == kind && s.GetNamespace() == ns && s.GetName() == name {
			return render.Object{Obj: s}, true, nil
		}
	}
	if d.opts.LiveObject == nil {
		return o, false, nil
	}
	live, err := d.opts.LiveObject(kind, ns, name)
	if err != nil || live == nil {
		return o, false, err
	}
	return render.Object{Obj: live}, true, nil
}

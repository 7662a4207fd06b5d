package rendercache

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/worker"
	"github.com/drift-gitops/drift/internal/scrub"
)

// A kept rendering never holds a Secret's value: each value of a Secret's data and
// stringData (but SOPS's ciphertext, which is what the repository holds) is kept
// as its placeholder, the keyed hash Store.Sum gives it. A run that takes the
// rendering puts each value back from the files the rendering read at its commit
// (which are what they were when it was made, or it is not taken) and from its
// render options (which the record is named by): the Secret's own file and the
// single files it read (kustomize's resources and generators' files, values files),
// each whole, each line of them, each YAML string of them and of the options (a
// HelmRelease's values), each of those lines and strings after its first "=" (an
// env file, a generator's literal), and each of all those base64-encoded. A
// rendering with a value none of them gives back (a chart's generated password, a
// decrypted value) is rendered again.

// placeholder marks a Secret's value in a kept rendering by its keyed hash.
const placeholder = "\x00drift-secret:hmac-sha256:"

// placeholderJSON is the placeholder as JSON writes it.
var placeholderJSON = []byte(`\u0000drift-secret:hmac-sha256:`)

// maxSourceBytes bounds a file read to put a Secret's values back.
const maxSourceBytes = 8 << 20

// seal is res with each Secret's values replaced by their placeholders, the
// Secrets as rendered, and how many values it replaced; ok is false when a Secret's
// data or stringData is not a map of strings (then the rendering is not kept).
func (c *Cache) seal(res *render.Result) (out *render.Result, secrets []*unstructured.Unstructured, sealed int, ok bool) {
	cp := *res
	cp.Objects = slices.Clone(res.Objects)
	for i, o := range cp.Objects {
		if id := o.ID(); id.Kind != "Secret" || id.Group != "" {
			continue
		}
		u := o.Get()
		if u == nil {
			return nil, nil, 0, false
		}
		secrets = append(secrets, u)
		v := u.DeepCopy()
		for _, field := range []string{"data", "stringData"} {
			values, found := v.Object[field]
			if !found || values == nil {
				continue
			}
			m, isMap := values.(map[string]any)
			if !isMap {
				return nil, nil, 0, false
			}
			for k, x := range m {
				s, isString := x.(string)
				if !isString {
					return nil, nil, 0, false
				}
				if !strings.HasPrefix(s, "ENC[") {
					m[k] = placeholder + c.Store.Sum(s)
					sealed++
				}
			}
		}
		cp.Objects[i] = o.With(v)
	}
	return &cp, secrets, sealed, true
}

// sealedWire is res as a kept record holds it (the render worker's wire format),
// its Secrets' values sealed; ok is false when it cannot be kept so: a Secret that
// cannot be sealed, a string of the rendering that already looks like a placeholder,
// or a Secret's value that shows anywhere else in it (an annotation, another
// object), as the report's scrubber finds one.
func (c *Cache) sealedWire(res *render.Result) ([]byte, bool) {
	out, secrets, sealed, ok := c.seal(res)
	if !ok {
		return nil, false
	}
	wire, err := worker.EncodeResponse(worker.WorkResponse{Result: out})
	if err != nil || bytes.Count(wire, placeholderJSON) != sealed {
		return nil, false
	}
	if len(secrets) > 0 {
		sc := scrub.New()
		sc.AddSecrets(secrets...)
		if sc.Holds(string(wire)) {
			return nil, false
		}
	}
	return wire, true
}

// unseal puts the values of the Secrets of res, a rendering taken from Store whose
// wire holds want placeholders, back from the files it read in fsys and from its
// options' JSON (spec); ok is false when one cannot be put back.
func (c *Cache) unseal(fsys fs.FS, spec []byte, res *render.Result, want int) bool {
	if fsys == nil {
		return false
	}
	r := &resolver{c: c, fsys: fsys, spec: spec, res: res, sums: map[string]string{}, seen: map[string]bool{}, files: map[string][]byte{}}
	restored := 0
	for _, o := range res.Objects {
		js, id, _, held := o.Held()
		if !held || !bytes.Contains(js, placeholderJSON) {
			continue
		}
		if id.Kind != "Secret" || id.Group != "" {
			return false
		}
		u := o.Get()
		for _, field := range []string{"data", "stringData"} {
			m, _ := u.Object[field].(map[string]any)
			for k, x := range m {
				s, _ := x.(string)
				sum, isPlaceholder := strings.CutPrefix(s, placeholder)
				if !isPlaceholder {
					continue
				}
				v, found := r.find(sum, k, o.Source)
				if !found {
					return false
				}
				m[k] = v
				restored++
			}
		}
	}
	return restored == want
}

// resolver finds the strings a rendering's Secrets' values were (secrets.go's
// comment) by their keyed hashes, hashing as few as it can: first the values
// written beside the value's own key in the Secret's file ("key: value", "key=value"),
// then every string of every source.
type resolver struct {
	c          *Cache
	fsys       fs.FS
	spec       []byte
	res        *render.Result
	sums       map[string]string // by keyed hash, the strings hashed so far
	seen       map[string]bool
	files      map[string][]byte // the files read, nil for one that cannot be
	everything bool              // every string of every source is hashed
}

// find is the string whose keyed hash is sum, the value of key in a Secret
// rendered from the file source.
func (r *resolver) find(sum, key, source string) (string, bool) {
	if v, ok := r.sums[sum]; ok {
		return v, true
	}
	for line := range strings.Lines(string(r.file(source))) {
		k, v, ok := strings.Cut(line, ":")
		if k2, v2, ok2 := strings.Cut(line, "="); ok2 && (!ok || len(k2) < len(k)) {
			k, v, ok = k2, v2, ok2
		}
		if !ok || strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(k), "- ")) != key {
			continue
		}
		v = strings.TrimSpace(v)
		r.add(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			var unquoted any
			if yaml.Unmarshal([]byte(v), &unquoted) == nil {
				if str, ok := unquoted.(string); ok {
					r.add(str)
				}
			}
		}
	}
	if v, ok := r.sums[sum]; ok {
		return v, true
	}
	if !r.everything {
		r.everything = true
		r.addEverything()
	}
	v, ok := r.sums[sum]
	return v, ok
}

// add hashes s and its base64 encoding.
func (r *resolver) add(s string) {
	if s == "" || r.seen[s] {
		return
	}
	r.seen[s] = true
	for _, v := range []string{s, base64.StdEncoding.EncodeToString([]byte(s))} {
		r.sums[r.c.Store.Sum(v)] = v
	}
}

// addValue hashes s, and what follows its first "=".
func (r *resolver) addValue(s string) {
	r.add(s)
	if _, v, ok := strings.Cut(s, "="); ok {
		r.add(v)
	}
}

// file is the file name of fsys, read once; nil when it cannot be read.
func (r *resolver) file(name string) []byte {
	if data, ok := r.files[name]; ok || name == "" {
		return data
	}
	r.files[name] = nil
	info, err := fs.Stat(r.fsys, name)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxSourceBytes {
		return nil
	}
	data, err := fs.ReadFile(r.fsys, name)
	if err != nil {
		return nil
	}
	r.files[name] = data
	return data
}

// addEverything hashes every string a value may be put back from (secrets.go's
// comment).
func (r *resolver) addEverything() {
	var options any
	if json.Unmarshal(r.spec, &options) == nil {
		walkStrings(options, r.addValue)
	}
	files := slices.Clone(r.res.Inputs.Files)
	for _, o := range r.res.Objects {
		if id := o.ID(); id.Kind == "Secret" && id.Group == "" && o.Source != "" {
			files = append(files, o.Source)
		}
	}
	slices.Sort(files)
	for _, name := range slices.Compact(files) {
		data := r.file(name)
		if data == nil {
			continue
		}
		r.add(string(data))
		for line := range strings.Lines(string(data)) {
			line = strings.TrimRight(line, "\r\n")
			r.addValue(line)
			r.add(strings.TrimSpace(line))
		}
		for _, doc := range render.SplitDocuments(data) {
			var v any
			if yaml.Unmarshal(doc, &v) == nil {
				walkStrings(v, r.addValue)
			}
		}
	}
}

// walkStrings calls f with every string of a decoded YAML value, keys included.
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case map[string]any:
		for k, e := range x {
			f(k)
			walkStrings(e, f)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}

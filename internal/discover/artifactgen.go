package discover

import (
	"cmp"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/drift-gitops/drift/internal/render"
)

// artifactGenerator is what of source-watcher's ArtifactGenerator
// (source.extensions.fluxcd.io/v1beta1) decides an ExternalArtifact's files.
type artifactGenerator struct {
	Spec struct {
		Sources []struct {
			Alias     string `json:"alias"`
			Kind      string `json:"kind"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"sources"`
		PathPattern string              `json:"pathPattern"`
		Artifacts   []generatedArtifact `json:"artifacts"`
	} `json:"spec"`
}

// generatedArtifact is one of an ArtifactGenerator's artifacts.
type generatedArtifact struct {
	Name string     `json:"name"`
	Copy []copyRule `json:"copy"`
}

// copyRule is one copy operation of an artifact.
type copyRule struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Exclude  []string `json:"exclude"`
	Strategy string   `json:"strategy"`
}

// KindArtifactGenerator is source-watcher's kind that builds ExternalArtifacts.
const KindArtifactGenerator = "ArtifactGenerator"

// externalArtifact reads a Kustomization's ExternalArtifact as the ArtifactGenerator
// that builds it from this repository makes it, when its copy operations move
// directories of this repository whole under one common prefix (source-watcher's
// builder: "@alias/dir/**" to "@artifact/sub/" copies dir's tree to sub/): the
// artifact is then the repository's directory prefix, and the Kustomization's path
// is read below it (d.artifactPrefix). Anything else says why it is not previewed.
func (d *discovery) externalArtifact(t *Target, ref crossRef, ns string) (string, error) {
	d.sourceUnknown = true
	var gen *artifactGenerator
	var where render.Object
	for _, o := range d.pool.all(KindArtifactGenerator, ns) {
		if !strings.HasPrefix(o.Get().GetAPIVersion(), "source.extensions.fluxcd.io/") {
			continue
		}
		var g artifactGenerator
		if err := fromObject(o.Get(), &g); err != nil {
			return fmt.Sprintf("its source ExternalArtifact %s is built by ArtifactGenerator %s, which cannot be read (%s): %v", objectName(ns, ref.Name), o.Get().GetName(), o.Where(), err), nil
		}
		artifacts, err := d.expandPathPattern(&g)
		if err != nil {
			return fmt.Sprintf("its source ExternalArtifact %s may be built by ArtifactGenerator %s, whose %v", objectName(ns, ref.Name), o.Get().GetName(), err), nil
		}
		for _, a := range artifacts {
			if a.Name == ref.Name {
				g.Spec.Artifacts = artifacts
				gen, where = &g, o
			}
		}
	}
	if gen == nil {
		return fmt.Sprintf("its source is ExternalArtifact %s, which no ArtifactGenerator drift finds in the repository builds", objectName(ns, ref.Name)), nil
	}
	name := "ArtifactGenerator " + objectName(ns, where.Get().GetName())
	if where.Source != "" {
		t.Inputs = append(t.Inputs, where.Source)
	}
	var prefix string
	var excludes []render.ArtifactExclude
	first := true
	for _, a := range gen.Spec.Artifacts {
		if a.Name != ref.Name {
			continue
		}
		for _, op := range a.Copy {
			p, dir, why := copiedPrefix(op.From, op.To, op.Exclude, op.Strategy)
			if why != "" {
				return fmt.Sprintf("its source ExternalArtifact %s is built by %s, whose copy from %q to %q %s, which drift does not map to the repository yet", objectName(ns, ref.Name), name, op.From, op.To, why), nil
			}
			alias := strings.SplitN(strings.TrimPrefix(op.From, "@"), "/", 2)[0]
			found := false
			for _, s := range gen.Spec.Sources {
				if s.Alias != alias {
					continue
				}
				found = true
				if why, err := d.fluxSource(t, crossRef{Kind: s.Kind, Name: s.Name, Namespace: s.Namespace}, ns); err != nil || why != "" {
					d.sourceUnknown = true
					return fmt.Sprintf("its source ExternalArtifact %s is built by %s from source %s: %s", objectName(ns, ref.Name), name, alias, why), err
				}
			}
			if !found {
				return fmt.Sprintf("its source ExternalArtifact %s is built by %s from source %q, which it does not define", objectName(ns, ref.Name), name, alias), nil
			}
			if !first && p != prefix {
				return fmt.Sprintf("its source ExternalArtifact %s is built by %s from directories that do not keep their places (%s and %s), which drift does not map to the repository yet", objectName(ns, ref.Name), name, cmp.Or(prefix, "."), cmp.Or(p, ".")), nil
			}
			prefix, first = p, false
			if len(op.Exclude) > 0 {
				excludes = append(excludes, render.ArtifactExclude{Base: dir, Patterns: op.Exclude})
			}
		}
	}
	if first {
		return fmt.Sprintf("its source ExternalArtifact %s is built by %s with nothing copied into it", objectName(ns, ref.Name), name), nil
	}
	d.sourceUnknown, d.artifactPrefix, d.artifactExcludes = false, prefix, excludes
	return "", nil
}

// copiedPrefix is the repository directory a copy operation's artifact directory
// stands for when it copies a directory's tree whole ("@alias/dir/**" to
// "@artifact/sub/", dir ending with sub), leaving out what its exclude patterns
// match: the artifact's path p is then the repository's prefix/p; dir is the copied
// directory. why says what keeps it from being one.
func copiedPrefix(from, to string, exclude []string, strategy string) (prefix, dir, why string) {
	for _, p := range exclude {
		if !doublestar.ValidatePattern(p) {
			return "", "", fmt.Sprintf("has an invalid exclude pattern %q (source-watcher refuses it)", p)
		}
	}
	// Merge merges a YAML file into one an earlier copy wrote at the same place; copies
	// that keep their places under one prefix write a file there only from the same
	// repository file, so merging is copying.
	if strategy != "" && strategy != "Overwrite" && strategy != "Merge" {
		return "", "", "uses the " + strategy + " strategy"
	}
	alias, pattern, ok := strings.Cut(strings.TrimPrefix(from, "@"), "/")
	if !strings.HasPrefix(from, "@") || !ok || alias == "" {
		return "", "", "is not @alias/pattern"
	}
	dir, ok = strings.CutSuffix(pattern, "/**")
	if !ok || strings.ContainsAny(dir, "*?[]") || dir == "" {
		return "", "", "is not a directory's whole tree (dir/**)"
	}
	sub, ok := strings.CutPrefix(to, "@artifact/")
	if !ok || !strings.HasSuffix(to, "/") && sub != "" {
		return "", "", "does not copy into a directory of the artifact"
	}
	dir, sub = path.Clean(dir), strings.TrimSuffix(path.Clean("/" + sub)[1:], "/")
	switch {
	case sub == "":
		return dir, dir, ""
	case dir == sub:
		return "", dir, ""
	case strings.HasSuffix(dir, "/"+sub):
		return strings.TrimSuffix(dir, "/"+sub), dir, ""
	}
	return "", "", "moves it to another place"
}

// captureRe finds a pathPattern's capture placeholders once quoted ("\\{app\\}").
var captureRe = regexp.MustCompile(`\\\{([a-zA-Z0-9_]+)\\\}`)

// placeholderRe finds the placeholders of an artifact's fields ("{app}").
var placeholderRe = regexp.MustCompile(`\{([a-zA-Z0-9_]+)\}`)

// expandPathPattern is an ArtifactGenerator's artifacts, expanded as source-watcher's
// buildArtifactRequests expands them when it has a pathPattern ("@alias/apps/{app}"):
// one set per directory of the source matching the pattern, each capture a path
// segment, names rendered with the captures lowercased and copy rules with them as
// written. drift reads the source as this repository; whether the alias is this
// repository is checked where the copies are read. Without a pathPattern, the
// artifacts as written.
func (d *discovery) expandPathPattern(g *artifactGenerator) ([]generatedArtifact, error) {
	if g.Spec.PathPattern == "" {
		return g.Spec.Artifacts, nil
	}
	_, pattern, ok := strings.Cut(g.Spec.PathPattern, "/")
	if !ok || !strings.HasPrefix(g.Spec.PathPattern, "@") {
		return nil, fmt.Errorf("pathPattern %q is not @alias/pattern (source-watcher refuses it)", g.Spec.PathPattern)
	}
	matcher, err := regexp.Compile("^" + captureRe.ReplaceAllString(regexp.QuoteMeta(pattern), `(?P<$1>[^/]+)`) + "$")
	if err != nil {
		return nil, fmt.Errorf("pathPattern %q cannot be read: %v", g.Spec.PathPattern, err)
	}
	fill := func(tmpl string, captures map[string]string) (string, error) {
		var missing string
		out := placeholderRe.ReplaceAllStringFunc(tmpl, func(m string) string {
			v, ok := captures[m[1:len(m)-1]]
			if !ok {
				missing = m
			}
			return v
		})
		if missing != "" {
			return "", fmt.Errorf("pathPattern %q captures no %s", g.Spec.PathPattern, missing)
		}
		return out, nil
	}
	var out []generatedArtifact
	err = fs.WalkDir(d.fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() || p == "." {
			return err
		}
		m := matcher.FindStringSubmatch(p)
		if m == nil {
			return nil
		}
		raw, lower := map[string]string{}, map[string]string{}
		for i, name := range matcher.SubexpNames() {
			if i > 0 && name != "" {
				raw[name], lower[name] = m[i], strings.ToLower(m[i])
			}
		}
		for _, a := range g.Spec.Artifacts {
			name, err := fill(a.Name, lower)
			if err != nil {
				return err
			}
			ra := generatedArtifact{Name: name}
			for _, c := range a.Copy {
				from, err := fill(c.From, raw)
				if err != nil {
					return err
				}
				to, err := fill(c.To, raw)
				if err != nil {
					return err
				}
				ra.Copy = append(ra.Copy, copyRule{From: from, To: to, Exclude: c.Exclude, Strategy: c.Strategy})
			}
			out = append(out, ra)
		}
		return nil
	})
	return out, err
}

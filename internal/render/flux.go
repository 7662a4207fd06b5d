package render

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// Flux's kustomize-controller builds a Kustomization's path with kustomize: with the
// directory's own kustomization file when it has one, else over one it generates
// (fluxcd/pkg/kustomize's generator): every .yaml and .yml file below the directory,
// in lexical order, and every subdirectory that has a kustomization file of its own,
// whose tree is then kustomize's to build. Files the source-controller leaves out of
// the artifact are not there to list (sourceignore.go).

// KustomizeAsFlux builds dir as Flux's kustomize-controller does: without kustomize's
// load restrictions (a kustomization may read any file of the repository, not only
// those in or below its directory), and over a generated kustomization when dir has
// none.
func KustomizeAsFlux(fsys fs.FS, dir string) *Result {
	return kustomizeSpec(fsys, Spec{Path: dir, Renderer: RendererKustomize, AsFlux: true})
}

// fluxKustomization is the kustomization Flux generates for dir.
func fluxKustomization(fsys fs.FS, dir string) ([]byte, error) {
	root := cmp.Or(dir, ".")
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	var resources []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if d.IsDir() {
			if findKustomization(fsys, p) != "" {
				resources = append(resources, "./"+relTo(root, p))
				return fs.SkipDir
			}
			return nil
		}
		if ext := path.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if _, err := sliceFromBytes(rf, data); err != nil {
			return fmt.Errorf("failed to decode Kubernetes YAML from %s: %w", p, err)
		}
		resources = append(resources, "./"+relTo(root, p))
		return nil
	})
	if err != nil {
		return nil, err
	}
	kus := kustypes.Kustomization{TypeMeta: kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind}}
	if len(resources) == 0 {
		kus.Namespace = "_placeholder" // as Flux does, so that an empty directory builds
	} else {
		kus.Resources = resources
	}
	return yaml.Marshal(kus)
}

// sliceFromBytes parses a file as kustomize's resource factory does, a panic in it
// being an error (as Flux recovers from it).
func sliceFromBytes(rf *resource.Factory, data []byte) (out []*resource.Resource, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML parser panicked: %v", r)
		}
	}()
	return rf.SliceFromBytes(data)
}

func relTo(root, p string) string {
	if root == "." {
		return p
	}
	return strings.TrimPrefix(p, root+"/")
}

// withFile is fsys with one more file.
type withFile struct {
	fs.FS
	name string
	data []byte
}

func (w withFile) Open(name string) (fs.File, error) {
	if name == w.name {
		return &memFile{Reader: bytes.NewReader(w.data), info: memInfo{name: path.Base(name), size: int64(len(w.data))}}, nil
	}
	return w.FS.Open(name)
}

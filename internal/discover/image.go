package discover

import (
	"fmt"
	"strings"

	kustypes "sigs.k8s.io/kustomize/api/types"
)

// parseImage reads an Argo CD kustomize.images entry, which Argo CD passes to
// `kustomize edit set image`: [NAME=]NEWNAME[:TAG][@DIGEST], or NAME:TAG and
// NAME@DIGEST to keep the name (a bare NAME says nothing, as kustomize refuses it).
func parseImage(s string) (kustypes.Image, error) {
	name, ref, renamed := strings.Cut(s, "=")
	if !renamed {
		ref = s
	}
	repo, tag, digest := splitImage(ref)
	if repo == "" || (renamed && name == "") || (!renamed && tag == "" && digest == "") {
		return kustypes.Image{}, fmt.Errorf("%q is not [NAME=]IMAGE[:TAG][@DIGEST]", s)
	}
	img := kustypes.Image{NewTag: tag, Digest: digest}
	if renamed {
		img.Name, img.NewName = name, repo
	} else {
		img.Name = repo
	}
	return img, nil
}

// splitImage splits an image reference into repository, tag and digest; a colon is a
// tag's only after the last slash (host:port/repo is a repository).
func splitImage(ref string) (repo, tag, digest string) {
	repo, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	return repo, tag, digest
}

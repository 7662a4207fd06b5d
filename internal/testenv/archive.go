package testenv

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// EnvtestArchive packs the etcd and kube-apiserver of assets (KUBEBUILDER_ASSETS) as
// the envtest release index packs them (controller-tools/envtest/...) into path, at
// gzip level, and returns the archive's SHA-512 as the index lists it: for tests of
// drift setup and the cold-start simulation, against a local index.
func EnvtestArchive(assets, path string, level int) (hash string, err error) {
	if assets == "" {
		return "", fmt.Errorf("KUBEBUILDER_ASSETS is not set")
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha512.New()
	gz, err := gzip.NewWriterLevel(io.MultiWriter(f, h), level)
	if err != nil {
		return "", err
	}
	tw := tar.NewWriter(gz)
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		data, err := os.ReadFile(filepath.Join(assets, bin)) // through a symlink to Debian's etcd
		if err != nil {
			return "", err
		}
		if err := tw.WriteHeader(&tar.Header{Name: "controller-tools/envtest/" + bin, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return "", err
		}
		if _, err := tw.Write(data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), f.Close()
}

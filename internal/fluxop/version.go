package fluxop

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// exactVersion matches a spec.distribution.version that names one Flux
// version ("2.7.0", "v2.7.0") rather than a range ("2.x", "2.7.x", ">=2.6").
var exactVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+$`)

// sourceV1Since is the first Flux version whose OCIRepository and Bucket the
// operator writes as source.toolkit.fluxcd.io/v1 (v1beta2 before it).
var sourceV1Since = semver.MustParse("2.6.0")

// fluxVersion is the Flux version the operator installs for a
// spec.distribution.version, as its manifest directories name it ("v2.7.0"):
// given is the caller's answer (the version the distribution artifact resolves
// the constraint to); without it, the constraint itself when it names one
// version, else "" (the operator picks the newest version its artifact holds
// that satisfies the constraint, which is not knowable offline).
func fluxVersion(constraint, given string) (string, error) {
	if given != "" {
		v, err := semver.NewVersion(given)
		if err != nil {
			return "", fmt.Errorf("Flux version %q: %w", given, err)
		}
		return "v" + v.String(), nil
	}
	if _, err := semver.NewConstraint(constraint); err != nil {
		return "", fmt.Errorf("spec.distribution.version %q: %w", constraint, err)
	}
	if exactVersion.MatchString(constraint) {
		return "v" + strings.TrimPrefix(constraint, "v"), nil
	}
	return "", nil
}

// sourceAPIVersion is the apiVersion the operator writes for an OCIRepository
// or Bucket sync source: v1 from Flux 2.6.0, v1beta2 before. When the version
// is not known it is v1 if the constraint admits any version from 2.6.0 on (the
// operator picks the newest version satisfying it), else v1beta2.
func sourceAPIVersion(version, constraint string) string {
	if version != "" {
		v, err := semver.NewVersion(version)
		if err == nil && !v.LessThan(sourceV1Since) {
			return "source.toolkit.fluxcd.io/v1"
		}
		return "source.toolkit.fluxcd.io/v1beta2"
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "source.toolkit.fluxcd.io/v1"
	}
	// Probe the Flux 2 releases from 2.6.0 on: minors 6 to 99, patches 0 to 30.
	for minor := uint64(6); minor < 100; minor++ {
		for patch := uint64(0); patch <= 30; patch++ {
			if c.Check(semver.New(2, minor, patch, "", "")) {
				return "source.toolkit.fluxcd.io/v1"
			}
		}
	}
	if c.Check(semver.New(3, 0, 0, "", "")) {
		return "source.toolkit.fluxcd.io/v1"
	}
	return "source.toolkit.fluxcd.io/v1beta2"
}

package render

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MinMemoryBytes is the least memory a render worker is given: its data segment holds
// drift's runtime and libraries before it renders anything, and a small kustomization
// needs some 100 MiB of it (measured).
const MinMemoryBytes = 256 << 20

// LimitSettings are the render limits as a user writes them (the runner's flags:
// never drift.yaml, since a repository must not raise its own limits). Each is named
// in errors by its flag.
type LimitSettings struct {
	Timeout time.Duration
	// Memory and Output are sizes: 512Mi, 2Gi or a number of bytes.
	Memory, Output string
	Objects        int
}

// ParseLimits checks the settings and turns them into Limits.
func ParseLimits(s LimitSettings) (Limits, error) {
	l := DefaultLimits()
	if s.Timeout <= 0 {
		return l, fmt.Errorf("--render-timeout must be positive, got %s", s.Timeout)
	}
	if s.Objects < 1 {
		return l, fmt.Errorf("--render-max-objects must be at least 1, got %d", s.Objects)
	}
	memory, err := parseSize("render-memory", s.Memory, MinMemoryBytes)
	if err != nil {
		return l, err
	}
	output, err := parseSize("render-max-output", s.Output, 1)
	if err != nil {
		return l, err
	}
	l.Timeout, l.MemoryBytes, l.OutputBytes, l.Objects = s.Timeout, memory, output, s.Objects
	return l, nil
}

// parseSize parses the size flag --name, which must be at least min bytes.
func parseSize(name, value string, min int64) (int64, error) {
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return 0, fmt.Errorf("--%s %q is not a size: write it as 512Mi, 2Gi or a number of bytes", name, value)
	}
	n, ok := q.AsInt64()
	if !ok || n < min {
		return 0, fmt.Errorf("--%s must be at least %s, got %s", name, resource.NewQuantity(min, resource.BinarySI), value)
	}
	return n, nil
}

package render

import (
	"fmt"
	"sort"
	"time"

	"github.com/drift-gitops/drift/internal/reason"
)

// Limits bound what rendering one target may cost. The repository is written by
// whoever opens the pull request, so these come from the runner (drift's flags),
// never from drift.yaml: a repository must not raise its own limits.
type Limits struct {
	// Timeout ends a rendering that runs longer (a template looping for hours).
	Timeout time.Duration
	// MemoryBytes caps a render worker's memory (its data segment, which holds the
	// Go heap and stacks).
	MemoryBytes int64
	// StackBytes caps a goroutine's stack in a render worker, so unbounded recursion
	// (a value that tpl's itself) ends fast and small instead of at Go's 1 GB.
	StackBytes int
	// OutputBytes caps a target's rendered output: Helm's template output, and the
	// encoded objects a worker sends back.
	OutputBytes int64
	// Objects caps the objects one target renders.
	Objects int
}

// Defaults, far above any real repository (the largest public charts render a few
// MiB and a few thousand objects) and far below what would take a CI runner down.
const (
	DefaultTimeout     = 5 * time.Minute
	DefaultMemoryBytes = 1 << 30
	DefaultStackBytes  = 64 << 20
	DefaultOutputBytes = 64 << 20
	DefaultObjects     = 50_000
)

// DefaultLimits are the limits drift renders with unless its flags say otherwise.
func DefaultLimits() Limits {
	return Limits{Timeout: DefaultTimeout, MemoryBytes: DefaultMemoryBytes, StackBytes: DefaultStackBytes,
		OutputBytes: DefaultOutputBytes, Objects: DefaultObjects}
}

// OrDefaults fills the limits left zero with the defaults.
func (l Limits) OrDefaults() Limits {
	d := DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.StackBytes <= 0 {
		l.StackBytes = d.StackBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.Objects <= 0 {
		l.Objects = d.Objects
	}
	return l
}

// TargetName names the target for messages: "helm chart charts/web". The renderer
// is known (Cache fills it in).
func TargetName(spec Spec) string {
	dir := displayDir(cleanDir(spec.Path))
	switch spec.Renderer {
	case RendererHelm:
		return "helm chart " + dir
	case RendererKustomize:
		return "kustomization " + dir
	}
	return "path " + dir
}

// TargetSource is where a failure of the whole target is reported: the chart's
// Chart.yaml for Helm, else the target's path.
func TargetSource(spec Spec) string {
	if spec.Renderer == RendererHelm {
		return joinRepo(cleanDir(spec.Path), "Chart.yaml")
	}
	return cleanDir(spec.Path)
}

// capObjects drops every object of a result that has more than max: a target that
// large is not previewed object by object (each would be a request to the cluster),
// it is one too-large failure.
func capObjects(res *Result, spec Spec, max int) {
	if res == nil || len(res.Objects) <= max {
		return
	}
	n := len(res.Objects)
	res.Objects = nil
	res.Failures = append(res.Failures, Failure{Source: TargetSource(spec), Reason: reason.TooLarge,
		Message: fmt.Sprintf("%s renders %d objects, over the limit of %d per target (--render-max-objects): split the target, or raise the limit if this is real",
			TargetName(spec), n, max)})
}

// checkHelmOutput refuses a Helm rendering whose templates wrote more than max bytes
// in all, naming the templates that wrote the most.
func checkHelmOutput(out map[string]string, max int64) *outputError {
	var total int64
	for _, s := range out {
		total += int64(len(s))
	}
	if total <= max {
		return nil
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if len(out[names[i]]) != len(out[names[j]]) {
			return len(out[names[i]]) > len(out[names[j]])
		}
		return names[i] < names[j]
	})
	largest := names[0]
	return &outputError{template: largest, size: int64(len(out[largest])), total: total, max: max}
}

// outputError is a Helm rendering over the output limit.
type outputError struct {
	template    string
	size, total int64
	max         int64
}

func (e *outputError) Error() string {
	return fmt.Sprintf("templates rendered %s, over the %s limit per target (--render-max-output); the largest is %s with %s",
		SizeOf(e.total), LimitSize(e.max), e.template, SizeOf(e.size))
}

// LimitSize writes a limit as its flag is written: 64 MiB, 1 GiB.
func LimitSize(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return SizeOf(n)
}

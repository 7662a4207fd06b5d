package entry

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/scrub"
)

// Options control what entries may show and how they are diffed.
type Options struct {
	// ShowSecrets leaves Secret values unmasked (local use only).
	ShowSecrets bool
	// DisabledRisks are risk rules switched off (drift.yaml's risks.disable).
	DisabledRisks map[string]bool
	// Unified, when set, is the diffs' lines of context (-U); report.DefaultContext
	// otherwise.
	Unified *int
	// Ephemeral says the live side is what drift loaded into a throwaway API server
	// (report.ClusterEphemeral), whose server-made identity and allocations change
	// with every run.
	Ephemeral bool
	// UnchangedYAML keeps the YAML of unchanged objects (FromYAML, ToYAML), which
	// only --dump and KUBECTL_EXTERNAL_DIFF read: without it an unchanged object's
	// entry holds none, and building it renders none.
	UnchangedYAML bool
}

// Builder builds a run's entries over the run's one scrubber. The run makes one
// Builder: the preview hands it each result as it finishes (Take) and drops the
// objects, and Build gets every target's entries from it, those taken and
// those of what is left, so every entry is built by the same builder and scrubbed of
// every value the run's scrubber knows.
//
// An entry is scrubbed of the values the scrubber knows when it is built: every
// target must be prepared (Prepare), with the previews of its Secrets and masked
// objects (Sensitive), before the first result is taken.
type Builder struct {
	opts Options
	sc   *scrub.Scrubber
	jq   jqCache

	mu sync.Mutex
	// taken are the entries built from results taken as their previews finished, by
	// target name.
	taken map[string]*taken
}

// taken are one target's entries built ahead, by index of the target's results.
type taken struct {
	rules   *rules
	entries map[int]built
}

// built are the entries of one result: its change, and the drift already there.
type built struct{ objects, drift []report.Object }

// NewBuilder returns a run's builder over sc, the run's scrubber, which it tells the
// values of every Secret and masked field of the run.
func NewBuilder(opts Options, sc *scrub.Scrubber) *Builder {
	return &Builder{opts: opts, sc: sc, taken: map[string]*taken{}}
}

// Scrubber is the run's scrubber.
func (b *Builder) Scrubber() *scrub.Scrubber { return b.sc }

// Prepare tells the scrubber a target's names, which the report shows anyway, and
// the values of its Secrets and masked fields on every side its results hold.
func (b *Builder) Prepare(ti TargetInput) {
	b.sc.AddPublic(ti.Name)
	rs := b.compile(ti.Rules)
	for _, r := range append(ti.AllResults(), ti.Elsewhere...) {
		b.sc.AddPublic(r.ID.Name, r.ID.Namespace)
		if !b.opts.ShowSecrets {
			// Only a rendered Secret or masked object holds values to learn: no other
			// rendered object is read (one held as JSON stays so, Object.Get).
			var rendered *unstructured.Unstructured
			masks := rs.maskFor(r.ID)
			if (r.ID.Group == "" && r.ID.Kind == "Secret") || len(masks) > 0 {
				rendered = r.Object.Get()
			}
			b.sc.AddSecrets(rendered, r.Live, r.Merged)
			for _, v := range maskedValues(masks, rendered, r.Live, r.Merged) {
				b.sc.AddValue(v)
			}
		}
	}
	for _, k := range ti.Kept {
		b.sc.AddPublic(k.ID.Name, k.ID.Namespace)
	}
	for _, id := range ti.Pending {
		b.sc.AddPublic(id.Name, id.Namespace)
	}
}

// Sensitive reports whether the scrubber must know an object's previewed values
// before any entry is built: a Secret's, or an object's whose fields a mask rule
// masks. Other objects' values are never scrubbed from elsewhere.
func (b *Builder) Sensitive(id object.ID, rules config.Rules) bool {
	if b.opts.ShowSecrets {
		return false
	}
	return (id.Group == "" && id.Kind == "Secret") || rules.Masks(id.Group, id.Kind, id.Namespace, id.Name)
}

// Take builds the entries of a target's i-th object from in, which holds the
// target's name and rules and that one result (in Results, or in Split when the
// target tells the change apart from drift), and keeps them for Entries. It reports
// whether it did: the caller may then drop the result's objects and counts it in
// TargetInput.Taken. A result whose entry cannot be built is not taken: kept
// whole, Build says why.
func (b *Builder) Take(in TargetInput, i int) bool {
	b.mu.Lock()
	t := b.taken[in.Name]
	if t == nil {
		t = &taken{rules: b.compile(in.Rules), entries: map[int]built{}}
		b.taken[in.Name] = t
	}
	b.mu.Unlock()
	var out built
	if err := b.entries(in, t.rules, &out); err != nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t.entries[i] = out
	return true
}

// Entries are the entries of a target's objects: the ti.Taken ones taken as their
// previews finished, in the order of the target's results, then those of
// ti.Results and ti.Split; drift holds the drift already in the cluster, when the
// target splits the stories.
func (b *Builder) Entries(ti TargetInput) (objects, drift []report.Object, err error) {
	var out built
	if ti.Taken > 0 {
		b.mu.Lock()
		t := b.taken[ti.Name]
		var at []int
		if t != nil {
			for i := range t.entries {
				at = append(at, i)
			}
		}
		if len(at) != ti.Taken {
			b.mu.Unlock()
			return nil, nil, fmt.Errorf("target %s: %d of its objects were taken as their previews finished, but this builder holds %d: the report must be built by the builder the preview fed", ti.Name, ti.Taken, len(at))
		}
		slices.Sort(at)
		for _, i := range at {
			out.objects = append(out.objects, t.entries[i].objects...)
			out.drift = append(out.drift, t.entries[i].drift...)
		}
		b.mu.Unlock()
	}
	if err := b.entries(ti, b.compile(ti.Rules), &out); err != nil {
		return nil, nil, err
	}
	return out.objects, out.drift, nil
}

// entries appends the entries of a target input's results and splits (not of its
// failures, kept objects or notes), in their order.
func (b *Builder) entries(ti TargetInput, rs *rules, out *built) error {
	split := ti.Split != nil
	add := func(r dryrun.Result, sd report.Sides, story string) error {
		o, err := b.build(r, rs, sd, story)
		if err != nil {
			return err
		}
		if story == report.StoryDrift {
			if o.Category != report.Unchanged {
				out.drift = append(out.drift, o)
			}
			return nil
		}
		out.objects = append(out.objects, o)
		return nil
	}
	for _, r := range ti.Results {
		sd, story := report.SidesApply, ""
		if split {
			sd, story = report.SidesChangeLive, report.StoryChange
		}
		if err := add(r, sd, story); err != nil {
			return err
		}
	}
	for _, sp := range ti.Split {
		change, sd, drift := stories(sp)
		if err := add(change, sd, report.StoryChange); err != nil {
			return err
		}
		if drift != nil {
			if err := add(*drift, report.SidesDrift, report.StoryDrift); err != nil {
				return err
			}
		}
	}
	return nil
}

// context is the diffs' lines of context.
func (b *Builder) context() int {
	if b.opts.Unified == nil || *b.opts.Unified < 0 {
		return report.DefaultContext
	}
	return *b.opts.Unified
}

package entry

import (
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
// Builder: the preview hands it each result as it finishes (Take) and keeps the
// entries it gets back in place of the result, and Build builds the entries of what
// is left with the same builder, so that every entry is scrubbed of every value the
// run's scrubber knows.
//
// An entry is scrubbed of the values the scrubber knows when it is built: the
// builder must have learnt every target's names and the values of its Secrets and
// masked objects (Learn, Sensitive) before the first result is taken.
type Builder struct {
	opts Options
	sc   *scrub.Scrubber
	jq   jqCache

	mu sync.Mutex
	// rules are the targets' compiled rules, by target name, for Take.
	rules map[string]*rules
}

// Built are the entries of one object's result, built as its preview finished
// (Builder.Take): its change, and the drift already there.
type Built struct{ objects, drift []report.Object }

// NewBuilder returns a run's builder over sc, the run's scrubber, which it tells the
// values of every Secret and masked field of the run.
func NewBuilder(opts Options, sc *scrub.Scrubber) *Builder {
	return &Builder{opts: opts, sc: sc, rules: map[string]*rules{}}
}

// Scrubber is the run's scrubber.
func (b *Builder) Scrubber() *scrub.Scrubber { return b.sc }

// Known is what a builder must know of one target before it builds any entry of
// the run: the names the report shows anyway, and the results whose Secrets' and
// masked fields' values it scrubs from every entry.
type Known struct {
	Target string
	Rules  config.Rules
	// Names are the objects whose names the report may show: those whose results
	// come later (still previewed), those kept from pruning.
	Names []object.ID
	// Results are the results whose names and secret values are the run's.
	Results []dryrun.Result
}

// Known is what the input tells a builder: every result it holds, another shard's
// included, and the names of what pruning keeps.
func (ti TargetInput) Known() Known {
	k := Known{Target: ti.Name, Rules: ti.Rules, Results: append(ti.AllResults(), ti.Elsewhere...)}
	for _, kept := range ti.Kept {
		k.Names = append(k.Names, kept.ID)
	}
	return k
}

// Learn tells the scrubber a target's names, which the report shows anyway, and the
// values of its Secrets and masked fields on every side its results hold.
func (b *Builder) Learn(k Known) {
	b.sc.AddPublic(k.Target)
	rs := b.compile(k.Rules)
	for _, r := range k.Results {
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
	for _, id := range k.Names {
		b.sc.AddPublic(id.Name, id.Namespace)
	}
}

// Sensitive reports whether the builder must know an object's previewed values
// before any entry is built: a Secret's, or an object's whose fields a mask rule
// masks. Other objects' values are never scrubbed from elsewhere.
func (b *Builder) Sensitive(id object.ID, rules config.Rules) bool {
	if b.opts.ShowSecrets {
		return false
	}
	return (id.Group == "" && id.Kind == "Secret") || rules.Masks(id.Group, id.Kind, id.Namespace, id.Name)
}

// One is one object's result, handed to Take as its preview finishes.
type One struct {
	Target string
	Rules  config.Rules
	Head   dryrun.Result
	// Split says the target tells the change apart from drift (TargetInput.Split):
	// Base is then the base's prediction, nil when it has none.
	Split bool
	Base  *dryrun.Result
}

// Take builds the entries of one result. It reports whether it did: the caller then
// keeps the entries in place of the result (TargetInput.Built) and may drop the
// result's objects. A result whose entry cannot be built is not taken: kept whole,
// Build says why.
func (b *Builder) Take(o One) (Built, bool) {
	b.mu.Lock()
	rs := b.rules[o.Target]
	if rs == nil {
		rs = b.compile(o.Rules)
		b.rules[o.Target] = rs
	}
	b.mu.Unlock()
	in := TargetInput{Name: o.Target, Rules: o.Rules, Results: []dryrun.Result{o.Head}}
	if o.Split {
		in.Results, in.Split = nil, []Split{{Head: o.Head, Base: o.Base}}
	}
	var out Built
	if err := b.entries(in, rs, &out); err != nil {
		return Built{}, false
	}
	return out, true
}

// Entries are the entries of a target's objects: those built as their previews
// finished (ti.Built), then those of ti.Results and ti.Split; drift holds the drift
// already in the cluster, when the target splits the stories.
func (b *Builder) Entries(ti TargetInput) (objects, drift []report.Object, err error) {
	var out Built
	for _, e := range ti.Built {
		out.objects = append(out.objects, e.objects...)
		out.drift = append(out.drift, e.drift...)
	}
	if err := b.entries(ti, b.compile(ti.Rules), &out); err != nil {
		return nil, nil, err
	}
	return out.objects, out.drift, nil
}

// entries appends the entries of a target input's results and splits (not of its
// failures, kept objects or notes), in their order.
func (b *Builder) entries(ti TargetInput, rs *rules, out *Built) error {
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

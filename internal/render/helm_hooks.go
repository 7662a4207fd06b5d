package render

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/release"

	"github.com/drift-gitops/drift/internal/reason"
)

// noteHookLeftOut is the target note of a hook drift does not preview. It names the
// hook by kind and template, not by name: hook names are often random
// (`helm test` pods), and the same chart must give the same report.
const noteHookLeftOut = "Helm hook %s (%s, %s) left out: %s"

// addHooks previews a chart's hooks as `helm upgrade` runs them (Helm's
// pkg/action/hooks.go), so that a synced cluster is reported unchanged on every run:
//
//   - test hooks run only under `helm test`: left out, with a target note;
//   - hooks for delete or rollback only never run on install or upgrade: left out;
//   - hooks deleted when they succeed (hook-succeeded) are not kept in the cluster,
//     so their absence is not drift, and their run is no change to an object: left
//     out, with a note that they run;
//   - every other hook stays in the cluster after it ran (before-hook-creation, the
//     default, deletes it only before it is created again): previewed as an object,
//     with a note (reason.HelmHook).
//
// Hook documents are applied as Helm stores them (trimmed, no final newline).
func addHooks(res *Result, hooks []*release.Hook, source func(string) string, add func(name, content string, notes []Note)) {
	sort.SliceStable(hooks, func(i, j int) bool {
		if hooks[i].Path != hooks[j].Path {
			return hooks[i].Path < hooks[j].Path
		}
		return hooks[i].Name < hooks[j].Name
	})
	for _, h := range hooks {
		events := hookEvents(h)
		if why := hookLeftOut(h); why != "" {
			res.Notes = append(res.Notes, fmt.Sprintf(noteHookLeftOut, h.Kind, source(h.Path), events, why))
			continue
		}
		add(h.Path, h.Manifest, []Note{{Reason: reason.HelmHook, Message: fmt.Sprintf(
			"Helm hook (%s): Helm creates it at install/upgrade time, outside the release, and deletes it per its hook-delete-policy; the preview shows it as if it were applied now",
			events)}})
	}
}

// hookLeftOut says why a hook is not previewed as an object, or "" when it is.
func hookLeftOut(h *release.Hook) string {
	runs := false
	onlyTest := true
	for _, e := range h.Events {
		switch e {
		case release.HookPreInstall, release.HookPostInstall, release.HookPreUpgrade, release.HookPostUpgrade:
			runs = true
		}
		if e != release.HookTest {
			onlyTest = false
		}
	}
	switch {
	case onlyTest:
		return "it runs only under `helm test`, never on install or upgrade"
	case !runs:
		return "it runs only when the release is deleted or rolled back, never on install or upgrade"
	case slices.Contains(h.DeletePolicies, release.HookSucceeded):
		return "Helm runs it at these events and deletes it once it succeeds (hook-succeeded), so it is not kept in the cluster: its absence is not drift, and it runs again at the next upgrade"
	}
	return ""
}

func hookEvents(h *release.Hook) string {
	events := make([]string, len(h.Events))
	for i, ev := range h.Events {
		events[i] = string(ev)
	}
	return strings.Join(events, ", ")
}

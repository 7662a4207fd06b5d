package main

import (
	"fmt"
	"time"
)

// measuredScenario is what one scenario's run measured: each command's medians, by
// key, and whether the repeat run's report was the cold run's (nil: not compared).
type measuredScenario struct {
	figures    map[string]figures
	repeatSame *bool
}

// goal is one line of docs/performance.md's goals for the far and the throwaway,
// judged from what the scenarios measured.
type goal struct {
	what string
	// judge returns the figure as it is printed and whether the goal is met; ok
	// false says the scenarios run did not measure it.
	judge func(m map[string]measuredScenario) (figure string, met, ok bool)
}

// ratio is drift's command key's median wall time over the apply-only floor's in
// scenario sc.
func ratio(m map[string]measuredScenario, sc, key string) (float64, bool) {
	f, a := m[sc].figures[key], m[sc].figures["apply"]
	if f.wall == 0 || a.wall == 0 {
		return 0, false
	}
	return f.wall.Seconds() / a.wall.Seconds(), true
}

// atMost is a goal that drift's key costs at most limit times the apply-only floor
// in scenario sc.
func atMost(sc, key string, limit float64) func(map[string]measuredScenario) (string, bool, bool) {
	return func(m map[string]measuredScenario) (string, bool, bool) {
		r, ok := ratio(m, sc, key)
		return fmt.Sprintf("%.2fx", r), r <= limit, ok
	}
}

var goals = []goal{
	{"cold <= 1.1x the apply-only floor, 10,000 objects on loopback", atMost("10k", "drift", 1.1)},
	{"cold <= 1.1x the apply-only floor, 1,000 objects at 20 ms", atMost("1k-20ms", "drift", 1.1)},
	{"cold <= 1.1x the apply-only floor, 10,000 objects at 20 ms", atMost("10k-20ms", "drift", 1.1)},
	{"repeat with nothing changed <= 0.1x the apply-only floor at 10,000, its report the cold run's", func(m map[string]measuredScenario) (string, bool, bool) {
		r, ok := ratio(m, "10k", "repeat")
		same := m["10k"].repeatSame
		if !ok || same == nil {
			return "", false, false
		}
		return fmt.Sprintf("%.2fx, the same report: %v", r, *same), r <= 0.1 && *same, true
	}},
	{"ephemeral --base at 10,000 objects (15% changed) <= 1.5x a live apply-only of the same objects", atMost("10k", "ephemeral", 1.5)},
	{"ephemeral --base at 1,000 objects <= 4 s", func(m map[string]measuredScenario) (string, bool, bool) {
		f := m["1k"].figures["ephemeral"]
		return fmt.Sprintf("%.2fs", f.wall.Seconds()), f.wall <= 4*time.Second, f.wall > 0
	}},
	{"peak RSS of the cold run at 10,000 objects <= 150 MiB", func(m map[string]measuredScenario) (string, bool, bool) {
		f := m["10k"].figures["drift"]
		return fmt.Sprintf("%.0f MiB", float64(f.rssKiB)/1024), f.rssKiB <= 150*1024, f.rssKiB > 0
	}},
	{"faster than kubectl diff --server-side --concurrency=32 in every scenario", func(m map[string]measuredScenario) (string, bool, bool) {
		figure, met, ok := "", true, false
		for _, sc := range []string{"1k", "10k", "1k-20ms", "10k-20ms"} {
			d, k := m[sc].figures["drift"], m[sc].figures["kubectl32"]
			if d.wall == 0 || k.wall == 0 {
				continue
			}
			ok = true
			met = met && d.wall < k.wall
			figure += fmt.Sprintf("%s%s %.2fx", map[bool]string{true: ", ", false: ""}[figure != ""], sc, d.wall.Seconds()/k.wall.Seconds())
		}
		return figure, met, ok
	}},
}

// printGoals prints each goal as met, not met, or not measured by the scenarios run.
func printGoals(m map[string]measuredScenario) {
	if len(m) == 0 {
		return
	}
	fmt.Println("\n== goals (docs/performance.md: the far and the throwaway)")
	for _, g := range goals {
		figure, met, ok := g.judge(m)
		switch {
		case !ok:
			fmt.Printf("goal: %s: not measured by these scenarios and commands\n", g.what)
		case met:
			fmt.Printf("goal: %s: %s, met\n", g.what, figure)
		default:
			fmt.Printf("goal: %s: %s, not met\n", g.what, figure)
		}
	}
}

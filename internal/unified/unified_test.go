package unified

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func lines(n int, f func(i int) string) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(f(i))
		sb.WriteByte('\n')
	}
	return sb.String()
}

// applyPatch applies diff to a copy of a with GNU patch -p1 and returns the result.
func applyPatch(t *testing.T, a, diff, name string) string {
	t.Helper()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Fatal("GNU patch is needed to check diffs (apt-get install patch)")
	}
	dir := t.TempDir()
	if a != "" {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("patch", "-p1", "--batch", "--no-backup-if-mismatch", "-s")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch refused the diff: %v\n%s\ndiff:\n%s", err, out, diff)
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return string(data)
}

func TestUnifiedDiffAppliesWithPatch(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	base := lines(60, func(i int) string { return fmt.Sprintf("line %d", i) })
	cases := map[string][2]string{
		"add":          {"", "a\nb\nc\n"},
		"one change":   {base, strings.Replace(base, "line 30\n", "line thirty\n", 1)},
		"first line":   {base, strings.Replace(base, "line 0\n", "zero\n", 1)},
		"last line":    {base, strings.Replace(base, "line 59\n", "", 1)},
		"two hunks":    {base, strings.Replace(strings.Replace(base, "line 5\n", "five\n", 1), "line 50\n", "fifty\n", 1)},
		"merged hunks": {base, strings.Replace(strings.Replace(base, "line 5\n", "five\n", 1), "line 11\n", "eleven\n", 1)},
		"insert only":  {base, strings.Replace(base, "line 20\n", "line 20\nnew a\nnew b\n", 1)},
		"no newline":   {"a\nb", "a\nc"},
	}
	for i := 0; i < 40; i++ {
		var a, b []string
		for j := 0; j < 80; j++ {
			l := fmt.Sprintf("k%d: %d", j%17, rng.Intn(4))
			a = append(a, l)
			if rng.Intn(5) != 0 {
				b = append(b, l)
			}
			if rng.Intn(7) == 0 {
				b = append(b, fmt.Sprintf("new%d", rng.Intn(3)))
			}
		}
		cases[fmt.Sprintf("random %d", i)] = [2]string{strings.Join(a, "\n") + "\n", strings.Join(b, "\n") + "\n"}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := Diff(c[0], c[1], "live/v1.ConfigMap.x", "merged/v1.ConfigMap.x", 3)
			if got := applyPatch(t, c[0], d, "v1.ConfigMap.x"); got != c[1] {
				t.Fatalf("patched result differs\nwant:\n%s\ngot:\n%s\ndiff:\n%s", c[1], got, d)
			}
		})
	}
	if d := Diff(base, base, "a", "b", 3); d != "" {
		t.Fatalf("equal inputs gave a diff: %q", d)
	}
}

func TestUnifiedDiffMatchesGNUDiff(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Fatal("diff(1) is needed")
	}
	base := lines(40, func(i int) string { return fmt.Sprintf("line %d", i) })
	for name, b := range map[string]string{
		"change": strings.Replace(base, "line 20\n", "twenty\n", 1),
		"delete": strings.Replace(base, "line 1\n", "", 1),
		"two":    strings.Replace(strings.Replace(base, "line 3\n", "three\n", 1), "line 30\n", "thirty\n", 1),
		"append": base + "more\n",
	} {
		for _, n := range []int{0, 1, 3, 10} {
			t.Run(fmt.Sprintf("%s -U %d", name, n), func(t *testing.T) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "a"), []byte(base), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "b"), []byte(b), 0o644); err != nil {
					t.Fatal(err)
				}
				out, _ := exec.Command("diff", "-U", strconv.Itoa(n), "--label", "a", "--label", "b", filepath.Join(dir, "a"), filepath.Join(dir, "b")).Output()
				if got := Diff(base, b, "a", "b", n); got != string(out) {
					t.Fatalf("drift:\n%s\nGNU diff:\n%s", got, out)
				}
			})
		}
	}
}

// Command callbacks counts the calls between drift's packages that go back into a
// package which imports the caller's: a function value or an interface method that
// an importer handed down (a warning callback, a sink, a transport hook). It reads a
// call graph (golang.org/x/tools/cmd/callgraph's -format of caller package, callee
// package, caller and callee, tab-separated) on stdin and each package's
// dependencies (go list -f '{{.ImportPath}} {{join .Deps " "}}') from the file it
// is given; calls of Error, String and the like (which every error and Stringer
// answers) are left out. hack/callbacks.sh runs it over drift's binary.
package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

const module = "github.com/drift-gitops/drift/"

// generic are the methods every error or Stringer answers, which a call graph
// resolves to every type that has them.
var generic = regexp.MustCompile(`\)\.(Error|String|Unwrap|Is|As|Format|Len|Less|Swap)$`)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: callgraph ... | callbacks DEPS-FILE")
		os.Exit(2)
	}
	deps, err := readDeps(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "callbacks:", err)
		os.Exit(1)
	}
	if err := count(os.Stdin, os.Stdout, deps); err != nil {
		fmt.Fprintln(os.Stderr, "callbacks:", err)
		os.Exit(1)
	}
}

// readDeps reads each package's dependencies of the module.
func readDeps(name string) (map[string]map[string]bool, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		out[f[0]] = map[string]bool{}
		for _, d := range f[1:] {
			out[f[0]][d] = true
		}
	}
	return out, nil
}

type pair struct{ from, to string }

// count reads the call graph and prints how many of the module's cross-package
// calls go back into a package that imports the caller's, by package pair.
func count(r io.Reader, w io.Writer, deps map[string]map[string]bool) error {
	seen := map[[2]string]bool{}
	back := map[pair][]string{}
	cross := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 || f[0] == f[1] || !strings.HasPrefix(f[0], module) || !strings.HasPrefix(f[1], module) || generic.MatchString(f[3]) {
			continue
		}
		call := [2]string{f[2], f[3]}
		if seen[call] {
			continue
		}
		seen[call] = true
		cross++
		if deps[f[1]][f[0]] {
			p := pair{strings.TrimPrefix(f[0], module), strings.TrimPrefix(f[1], module)}
			back[p] = append(back[p], strings.ReplaceAll(f[2]+" -> "+f[3], module, ""))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	n := 0
	for _, calls := range back {
		n += len(calls)
	}
	fmt.Fprintf(w, "%d calls between drift's packages; %d of them (%.0f%%) go back into a package that imports the caller's, in %d pairs of packages\n",
		cross, n, 100*float64(n)/float64(max(cross, 1)), len(back))
	pairs := make([]pair, 0, len(back))
	for p := range back {
		pairs = append(pairs, p)
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(len(back[b]), len(back[a])), cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
	})
	for _, p := range pairs {
		calls := back[p]
		slices.Sort(calls)
		fmt.Fprintf(w, "%4d %s -> %s (%s)\n", len(calls), p.from, p.to, calls[0])
	}
	return nil
}

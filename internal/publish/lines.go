package publish

import (
	"io/fs"
	"strings"
	"sync"

	"github.com/drift-gitops/drift/internal/render"
)

// maxLinesFileBytes bounds the files DocumentLines reads: the render refuses larger
// ones, whose errors are annotated without a line.
const maxLinesFileBytes = render.DefaultMaxFileBytes

// DocumentLines returns where, in a file of fsys, its doc-th YAML document starts (1
// for the first; the line after a leading "---"), for annotations; 0 when unknown.
// Each file is read once, and only when it is no larger than the render reads.
func DocumentLines(fsys fs.FS) func(source string, doc int) int {
	var mu sync.Mutex
	starts := map[string][]int{}
	return func(source string, doc int) int {
		if fsys == nil || doc < 1 {
			return 0
		}
		mu.Lock()
		defer mu.Unlock()
		s, ok := starts[source]
		if !ok {
			s = documentStarts(fsys, source)
			starts[source] = s
		}
		if doc > len(s) {
			return 0
		}
		return s[doc-1]
	}
}

// documentStarts lists the line each YAML document of the file starts on.
func documentStarts(fsys fs.FS, source string) []int {
	if st, err := fs.Stat(fsys, source); err != nil || st.Size() > maxLinesFileBytes {
		return nil
	}
	data, err := fs.ReadFile(fsys, source)
	if err != nil {
		return nil
	}
	starts := []int{1}
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "---") || (len(line) > 3 && line[3] != ' ' && line[3] != '\t' && line[3] != '\r') {
			continue
		}
		if i == 0 {
			starts[0] = 2 // a leading separator: the first document starts after it
			continue
		}
		starts = append(starts, i+2)
	}
	return starts
}

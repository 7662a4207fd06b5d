package render

import (
	"fmt"
	"io"
)

// WorkerMain is the render subprocess's main. Placeholder: replaced by the isolated
// rendering work.
func WorkerMain(stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "drift: the render worker is not built yet")
	return 2
}

package ephemeral

import (
	"fmt"
	"os"
)

// ReaperMain is the reaper subprocess's main. Placeholder: replaced by the
// parent-death work.
func ReaperMain(args []string) int {
	fmt.Fprintln(os.Stderr, "drift: the reaper is not built yet")
	return 2
}

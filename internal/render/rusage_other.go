//go:build !unix

package render

import "os"

func killedBy(*os.ProcessState) string { return "" }

package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// StartProfiling writes a CPU profile to $DRIFT_PPROF_CPU_PROFILE and a heap profile
// to $DRIFT_PPROF_MEM_PROFILE when they are set (as helm's HELM_PPROF_* variables);
// the returned stop writes them. It is for measuring drift (docs/performance.md).
func StartProfiling() (stop func()) {
	cpu, mem := os.Getenv("DRIFT_PPROF_CPU_PROFILE"), os.Getenv("DRIFT_PPROF_MEM_PROFILE")
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "drift: warning: DRIFT_PPROF_CPU_PROFILE: %v\n", err)
		} else {
			cpuFile = f
		}
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if mem == "" {
			return
		}
		f, err := os.Create(mem)
		if err == nil {
			err = pprof.WriteHeapProfile(f)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "drift: warning: DRIFT_PPROF_MEM_PROFILE: %v\n", err)
		}
	}
}

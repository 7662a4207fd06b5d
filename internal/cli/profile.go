package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// StartProfiling writes a CPU profile to $DRIFT_PPROF_CPU_PROFILE, a heap profile to
// $DRIFT_PPROF_MEM_PROFILE (as helm's HELM_PPROF_* variables) and an execution trace
// (go tool trace) to $DRIFT_PPROF_TRACE when they are set; the returned stop writes
// them. It is for measuring drift (docs/performance.md).
func StartProfiling() (stop func()) {
	cpu, mem, tr := os.Getenv("DRIFT_PPROF_CPU_PROFILE"), os.Getenv("DRIFT_PPROF_MEM_PROFILE"), os.Getenv("DRIFT_PPROF_TRACE")
	var cpuFile, traceFile *os.File
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
	if tr != "" {
		f, err := os.Create(tr)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "drift: warning: DRIFT_PPROF_TRACE: %v\n", err)
		} else {
			traceFile = f
		}
	}
	return func() {
		if traceFile != nil {
			trace.Stop()
			traceFile.Close()
		}
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

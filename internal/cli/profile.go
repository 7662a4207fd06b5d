package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// StartProfiling writes a CPU profile to $DRIFT_PPROF_CPU_PROFILE, a heap profile to
// $DRIFT_PPROF_MEM_PROFILE (as helm's HELM_PPROF_* variables) and an execution trace
// (go tool trace) to $DRIFT_PPROF_TRACE when they are set; the returned stop writes
// them. It is for measuring drift (docs/performance.md).
func StartProfiling() (stop func()) {
	cpuFile := startWriting("DRIFT_PPROF_CPU_PROFILE", pprof.StartCPUProfile)
	traceFile := startWriting("DRIFT_PPROF_TRACE", trace.Start)
	mem := os.Getenv("DRIFT_PPROF_MEM_PROFILE")
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

// startWriting creates the file the variable env names and starts start writing to
// it; nil when env is unset or the file cannot be written (said on stderr).
func startWriting(env string, start func(io.Writer) error) *os.File {
	name := os.Getenv(env)
	if name == "" {
		return nil
	}
	f, err := os.Create(name)
	if err == nil {
		if err = start(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "drift: warning: %s: %v\n", env, err)
		return nil
	}
	return f
}

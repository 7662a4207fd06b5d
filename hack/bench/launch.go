package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Linux charges a process started with vfork (as Go's os/exec starts it) with the
// resident set of the process that started it: a command the benchmark starts
// directly would report at least the benchmark's own peak RSS (127 MiB once it has
// generated 10,000 objects). The benchmark therefore starts each command through this
// program again, as a small launcher (-launch), whose own wait for the command reads
// the command's CPU time and peak RSS and hands them back on fd 3.

// The launcher is this benchmark's binary, whose own start (tens of milliseconds: it
// links envtest and the Kubernetes clients) is not the command's: the launcher times
// the command itself, from just before it starts it to when it has waited for it.

// launch is the launcher: it runs argv and writes "utime-ns stime-ns maxrss-KiB
// wall-ns" to fd 3; its exit status is the command's.
func launch(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		return 127
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	report := os.NewFile(3, "rusage")
	fmt.Fprintf(report, "%d %d %d %d\n", ru.Utime.Nano(), ru.Stime.Nano(), ru.Maxrss, wall.Nanoseconds())
	report.Close()
	return cmd.ProcessState.ExitCode()
}

// measure runs a command through the launcher, with env added to the environment,
// and returns its wall time (as the launcher timed it), CPU time (user + system, its children included), peak
// RSS (KiB) and stdout. Exit status 1 (changes found) is success for both tools.
func measure(argv, env []string) (time.Duration, time.Duration, int64, string, error) {
	wall, cpu, rss, out, _, err := measureExit(argv, env, 1)
	return wall, cpu, rss, out, err
}

// measureExit is measure taking every exit status up to ok as success, and
// returning it.
func measureExit(argv, env []string, ok int) (time.Duration, time.Duration, int64, string, int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, 0, "", 0, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, 0, 0, "", 0, err
	}
	cmd := exec.CommandContext(context.Background(), self, append([]string{"-launch", "--"}, argv...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = &out, &errOut, []*os.File{w}
	cmd.Env = append(os.Environ(), env...)
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return 0, 0, 0, "", 0, err
	}
	var utime, stime, maxrss, wall int64
	_, scanErr := fmt.Fscan(r, &utime, &stime, &maxrss, &wall)
	r.Close()
	err = cmd.Wait()
	code := 0
	if ee, isExit := err.(*exec.ExitError); isExit && ee.ExitCode() <= ok {
		code, err = ee.ExitCode(), nil
	}
	if err == nil && scanErr != nil {
		err = fmt.Errorf("the launcher reported no usage: %v", scanErr)
	}
	if err != nil {
		return 0, 0, 0, "", 0, fmt.Errorf("%v: %s", err, errOut.String())
	}
	return time.Duration(wall), time.Duration(utime + stime), maxrss, out.String(), code, nil
}

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"cdcspec/report"
	"cdcspec/traces"
)

func init() {
	register("trace", "check TiCDC logs against the spec's properties", runTrace)
}

// traceStdin is the stream "-" reads; tests replace it.
var traceStdin io.Reader = os.Stdin

func runTrace(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("trace", flag.ContinueOnError)
	fl.SetOutput(stderr)
	format := fl.String("format", "text", "output format: text, json, junit or html (a self-contained incident report with a timeline per changefeed)")
	errWindow := fl.Duration("error-window", 60*time.Second, "an error re-reported this long with no backoff line is dropped (error-never-dropped)")
	minReports := fl.Int("error-min-reports", 2, "maintainer re-reports needed, over the window, for an error-never-dropped violation")
	stuckAfter := fl.Duration("stuck-after", 5*time.Minute, "an operator, checkpoint or failed bootstrap unchanged this long is suspect")
	skew := fl.Duration("skew", 2*time.Second, "clock skew tolerated between captures' logs")
	errorStuck := fl.Duration("error-stuck-duration", 0, "the changefeeds' changefeed-error-stuck-duration: check error-stuck-fails (no restart later than this after the first of its streak); 0: not checked")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: cdcspec trace [--format text|json|junit|html] [--error-window D] [--stuck-after D] FILE...|-")
		fmt.Fprintln(stderr, "\nChecks TiCDC logs (files, directories, globs, .gz, - for stdin; several files are merged by time).")
		fmt.Fprintln(stderr, "Exit status: 0 no violation, 1 at least one violation, 2 usage error, unreadable input or an input with no TiCDC log record.")
		fmt.Fprintln(stderr)
		fl.PrintDefaults()
	}
	if code, ok := parseFlags(fl, args, true, stderr); !ok {
		return code
	}
	switch *format {
	case "text", "json", "junit", "html":
	default:
		fmt.Fprintf(stderr, "cdcspec trace: unknown format %q (want text, json, junit or html)\n", *format)
		return exitUsage
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "cdcspec trace: no input (give files, directories, globs or - for stdin)")
		fl.Usage()
		return exitUsage
	}
	if *errWindow <= 0 || *stuckAfter <= 0 || *minReports <= 0 || *skew < 0 {
		fmt.Fprintln(stderr, "cdcspec trace: --error-window, --stuck-after and --error-min-reports must be positive")
		return exitUsage
	}
	if *errorStuck < 0 {
		fmt.Fprintf(stderr, "cdcspec trace: --error-stuck-duration must not be negative, got %s\n", *errorStuck)
		return exitUsage
	}
	inputs, err := traces.ExpandInputs(fl.Args(), traceStdin)
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec trace: %v\n", err)
		return exitUsage
	}
	// The checker's live heap is small (tens of MB at most; under 10 MB on
	// a healthy log); trading a little of it for less GC work (fewer
	// cycles with write barriers on) speeds up large logs.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	// ... but never past 60 MB: the soft limit makes the GC work harder
	// instead (the live heap is bounded by the chunks in flight and the
	// monitors' state, far below it).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(60 << 20))
	rep, err := traces.Run(inputs, traces.Options{
		ErrorWindow: *errWindow, ErrorMinReports: *minReports, StuckAfter: *stuckAfter, Skew: *skew,
		ErrorStuckDuration: *errorStuck, Timeline: *format == "html",
	})
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec trace: %v\n", err)
		return exitUsage
	}
	notLogs, warnings := rep.InputProblems()
	for _, w := range warnings {
		fmt.Fprintf(stderr, "cdcspec trace: %s\n", w)
	}
	if len(notLogs) > 0 {
		for _, e := range notLogs {
			fmt.Fprintf(stderr, "cdcspec trace: %s\n", e)
		}
		return exitUsage
	}
	switch *format {
	case "json":
		err = rep.WriteJSON(stdout)
	case "junit":
		err = rep.WriteJUnit(stdout)
	case "html":
		err = report.TraceHTML(stdout, rep, "cdcspec trace: "+strings.Join(fl.Args(), " "))
	default:
		rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec trace: writing output: %v\n", err)
		return exitUsage
	}
	if rep.Violations() > 0 {
		return exitViolation
	}
	return exitOK
}

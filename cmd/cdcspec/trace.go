package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"cdcspec/report"
	"cdcspec/traces"
	"cdcspec/traces/kafkastream"
)

func init() {
	register("trace", traceHelp.summary, runTrace)
}

// traceStdin is the stream "-" reads; tests replace it.
var traceStdin io.Reader = os.Stdin

// traceHelp is `cdcspec trace -h`.
var traceHelp = help{
	summary: "check TiCDC logs against the spec's properties",
	usage:   "[flags] FILE|DIR|GLOB|-...",
	examples: []string{
		"cdcspec trace cdc.log",
		"cdcspec trace --fail-on suspect logs/                  # a CI gate: a suspicion fails too",
		"cdcspec trace --format html cdc-*.log.gz > report.html # an incident report with a timeline",
	},
	exits: []string{
		"0  no finding at or above --fail-on",
		"1  a violation (or, with --fail-on suspect, a suspicion)",
		"2  usage error, unreadable input, or an input with no TiCDC log record",
		"3  nothing checked: no record the checker recognises, or no timestamp that parses",
	},
}

func runTrace(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("trace", traceHelp, stdout, stderr)
	format := fl.String("format", "text", "output `format`: text, json, junit or html (a self-contained incident report with a timeline per changefeed)")
	failOn := fl.String("fail-on", string(traces.Violation), "exit 1 on a finding of this `severity` or stronger: violation or suspect")
	errWindow := fl.Duration("error-window", 60*time.Second, "an error re-reported this long with no backoff line is dropped (error-never-dropped)")
	minReports := fl.Int("error-min-reports", 2, "maintainer re-reports needed, over the window, for an error-never-dropped violation")
	stuckAfter := fl.Duration("stuck-after", 5*time.Minute, "an operator, checkpoint or failed bootstrap unchanged this long is suspect")
	skew := fl.Duration("skew", 2*time.Second, "clock skew tolerated between captures' logs")
	errorStuck := fl.Duration("error-stuck-duration", 0, "the changefeeds' changefeed-error-stuck-duration: check error-stuck-fails (no restart later than this after the first of its streak); 0: not checked")
	brokers := fl.String("kafka", "", "check continuously from Kafka: the `brokers` (host:port,...) of the raw log topic (--topic) instead of files; runs until interrupted")
	topic := fl.String("topic", "", "with --kafka: the raw `topic` (one message per log line, keyed by capture); its items go to TOPIC.events, the findings to TOPIC.findings")
	group := fl.String("group", "", "with --kafka: the consumer `group` prefix (GROUP-parse and GROUP-check)")
	if code, ok := fl.parse(args, true); !ok {
		return code
	}
	if *brokers != "" || *topic != "" || *group != "" {
		return runTraceKafka(fl, *brokers, *topic, *group, *format, traces.Options{
			ErrorWindow: *errWindow, ErrorMinReports: *minReports, StuckAfter: *stuckAfter, Skew: *skew,
			ErrorStuckDuration: *errorStuck}, stdout, stderr)
	}
	if err := firstErr(
		oneOf("--format", *format, "text", "json", "junit", "html"),
		oneOf("--fail-on", *failOn, string(traces.Violation), string(traces.Suspect)),
		durationIn("--error-window", *errWindow, time.Millisecond, 24*time.Hour),
		intIn("--error-min-reports", *minReports, 1, 1000),
		durationIn("--stuck-after", *stuckAfter, time.Millisecond, 30*24*time.Hour),
		durationIn("--skew", *skew, time.Millisecond, time.Hour),
		durationIn("--error-stuck-duration", *errorStuck, 0, 30*24*time.Hour),
	); err != nil {
		return fl.usageError("%v", err)
	}
	if fl.NArg() == 0 {
		return fl.usageError("no input (give files, directories, globs or - for stdin); 'cdcspec trace -h' shows examples")
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
	return traceExit(rep.Verdict(), traces.Severity(*failOn))
}

// traceExit maps the verdict to the exit code: 3 when nothing was checked
// (no finding, and no record recognised or no timestamp: see
// traces.Report.Verdict), 1 on a finding at or above failOn, else 0.
func traceExit(v traces.Verdict, failOn traces.Severity) int {
	switch {
	case v.Result == traces.VerdictNothingChecked:
		return exitIncomplete
	case v.Violations > 0:
		return exitViolation
	case v.Suspects > 0 && failOn == traces.Suspect:
		return exitViolation
	}
	return exitOK
}

// runTraceKafka is `cdcspec trace --kafka`: both stages of the streaming
// checker (traces/kafkastream) in this process until SIGINT or SIGTERM,
// each published finding on stdout (a text block, or a JSON line with
// --format json).
func runTraceKafka(fl *cmdFlags, brokers, topic, group, format string, opt traces.Options, stdout, stderr io.Writer) int {
	switch {
	case brokers == "" || topic == "" || group == "":
		return fl.usageError("--kafka, --topic and --group go together (got --kafka %q --topic %q --group %q)", brokers, topic, group)
	case fl.NArg() > 0:
		return fl.usageError("--kafka reads no files (got %s)", strings.Join(fl.Args(), " "))
	case format != "text" && format != "json":
		return fl.usageError("--format %s: with --kafka, text or json", format)
	}
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	cfg := kafkastream.Config{Brokers: strings.Split(brokers, ","), Raw: topic, Events: topic + ".events",
		Findings: topic + ".findings", Group: group, Options: opt,
		OnFinding: func(f traces.Finding) {
			mu.Lock()
			defer mu.Unlock()
			if format == "json" {
				enc.Encode(&f)
				return
			}
			fmt.Fprintf(stdout, "%s  %s  changefeed %s  id %s\n  %s\n", f.Property, strings.ToUpper(string(f.Severity)), f.Changefeed, f.ID(), f.Message)
		}}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- kafkastream.RunParse(ctx, cfg) }()
	go func() { errs <- kafkastream.RunCheck(ctx, cfg) }()
	var first error
	for range 2 {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	if first != nil {
		fmt.Fprintf(stderr, "cdcspec trace: %v\n", first)
		return exitUsage
	}
	return exitOK
}

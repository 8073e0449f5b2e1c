package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"cdcspec/runtime/cluster"
	"cdcspec/spec"
)

func init() {
	register("run", "run a real cluster (etcd, Kafka, capture processes) under faults and check it", runRun)
}

// statusWriter shows progress as one rewritten line on a terminal.
type statusWriter struct {
	w    io.Writer
	last bool
}

func (s *statusWriter) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	fmt.Fprintf(s.w, "\r\033[K%s", line)
	s.last = true
	return len(p), nil
}

func (s *statusWriter) done() {
	if s.last {
		fmt.Fprintln(s.w)
	}
}

func runRun(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var etcd, kafka, bugs, faults listFlag
	fl.Var(&etcd, "etcd", "external etcd endpoint `host:port` (repeatable or comma-separated; probed first; default: embedded etcd)")
	fl.Var(&kafka, "kafka", "external Kafka broker `host:port` (repeatable or comma-separated; probed first; default: embedded kfake, which sink-error needs)")
	fl.Var(&bugs, "bug", "switch a catalogued bug on in every capture: `NAME` as cdcspec bugs lists them (repeatable)")
	fl.Var(&faults, "faults", "`LIST`: comma list of faults and domain actions, spread over --duration: "+strings.Join(cluster.Names(), ",")+
		" (default "+strings.Join(cluster.DefaultFaults, ",")+", less sink-error with --kafka; \"none\" for none; \"random:N\" for N drawn with --seed; cdcspec faults describes each)")
	kafkaListen := fl.String("kafka-listen", "", "embedded kfake's address, e.g. 127.0.0.1:9092 (kcat can read the topic)")
	nodes := fl.Int("nodes", 3, fmt.Sprintf("capture processes, 1..%d", maxRunNodes))
	tables := fl.Int("tables", 4, fmt.Sprintf("initial upstream tables, 1..%d", maxRunTables))
	rate := fl.Float64("rate", 2000, fmt.Sprintf("upstream row changes per second (all initial tables), 1..%g", maxRunRate))
	duration := fl.Duration("duration", 60*time.Second, "fault phase length, 1s..24h")
	settle := fl.Duration("settle-timeout", 120*time.Second, "how long to wait for the checkpoint after healing, 1s..1h")
	scenario := fl.String("scenario", "", "run a seed's fault schedule instead (runtime/cluster/scenarios): "+strings.Join(cluster.Scenarios(), ", "))
	seed := fl.Uint64("seed", 1, "seed of the upstream and of fault targets")
	format := fl.String("format", "text", "report format: text or json")
	logDir := fl.String("log-dir", "", "directory for the logs (default a new temp dir)")
	ttl := fl.Duration("session-ttl", 5*time.Second, "captures' etcd session TTL, 1s..1m")
	kto := fl.Duration("kafka-timeout", 2*time.Second, "captures' Kafka request timeout, 100ms..1m")
	ddlEvery := fl.Duration("ddl-every", 0, "DDL traffic: the upstream commits a blocking DDL of a random kind (alter, rename, DB-level, syncpoint) this often during the fault phase, 1s..1h (default none)")
	fl.Usage = func() {} // -h prints runUsage on stdout; a bad flag names itself
	if code, ok := parseFlags(fl, args, false, stderr); !ok {
		if code == exitOK {
			runUsage(stdout, fl)
		} else {
			fmt.Fprintln(stderr, "'cdcspec run -h' lists its flags")
		}
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "cdcspec run: unknown format %q (want text or json)\n", *format)
		return exitUsage
	}
	if err := checkRunFlags(fl, runFlags{nodes: *nodes, tables: *tables, rate: *rate, duration: *duration, settle: *settle,
		ttl: *ttl, kafkaTimeout: *kto, ddlEvery: *ddlEvery, kafkaListen: *kafkaListen, etcd: etcd, kafka: kafka, bugs: bugs, faults: faults, scenario: *scenario}); err != nil {
		fmt.Fprintf(stderr, "cdcspec run: %v\n", err)
		return exitUsage
	}
	rc := cluster.RunConfig{Duration: *duration, SettleTimeout: *settle, DDLEvery: *ddlEvery, Cluster: cluster.Config{
		Nodes: *nodes, Tables: *tables, Rate: *rate, Seed: *seed, Bugs: bugs, Etcd: etcd, Kafka: kafka,
		KafkaListen: *kafkaListen, LogDir: *logDir, SessionTTL: *ttl, KafkaTimeout: *kto}}
	if code, ok := runSchedule(fl, &rc, faults, *scenario, *seed, stderr); !ok {
		return code
	}
	return executeRun(rc, *format, stdout, stderr)
}

// runSchedule sets rc's fault schedule: a scenario's (with its captures and
// a duration that covers it unless --nodes or --duration say otherwise), none,
// random:N drawn with the seed, or the --faults list spread over
// rc.Duration; ok is false with the exit code after a usage error.
func runSchedule(fl *flag.FlagSet, rc *cluster.RunConfig, faults listFlag, scenario string, seed uint64, stderr io.Writer) (code int, ok bool) {
	switch {
	case scenario != "":
		sc, err := cluster.LoadScenario(scenario)
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec run: --scenario: %v\n", err)
			return exitUsage, false
		}
		steps := sc.Steps
		rc.Steps = steps
		rc.Exact = true
		rc.Cluster.LegacyRawWatermark = sc.RawWatermark
		nodesSet := false
		fl.Visit(func(f *flag.Flag) { nodesSet = nodesSet || f.Name == "nodes" })
		if sc.Captures > 0 && !nodesSet {
			rc.Cluster.Nodes = sc.Captures
		}
		durSet := false
		fl.Visit(func(f *flag.Flag) { durSet = durSet || f.Name == "duration" })
		if last := steps[len(steps)-1].At + 20*time.Second; !durSet || rc.Duration < last {
			rc.Duration = last
		}
	case len(faults) == 1 && faults[0] == "none":
		rc.Steps = []cluster.Step{}
	case len(faults) == 1 && strings.HasPrefix(faults[0], "random:"):
		n, err := strconv.Atoi(strings.TrimPrefix(faults[0], "random:"))
		if err == nil {
			err = intIn("--faults random:N", n, 1, maxRandomFaults)
		}
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec run: --faults %s: want random:N with N in [1, %d] (%v)\n", faults[0], maxRandomFaults, err)
			return exitUsage, false
		}
		steps, names, err := cluster.RandomSchedule(n, seed, rc.Duration)
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec run: --faults: %v\n", err)
			return exitUsage, false
		}
		fmt.Fprintf(stderr, "cdcspec run: --faults %s with --seed %d drew: %s\n", faults[0], seed, strings.Join(names, ","))
		rc.Steps = steps
	case len(faults) > 0:
		steps, err := cluster.Schedule(faults, rc.Duration)
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec run: --faults: %v\n", err)
			return exitUsage, false
		}
		rc.Steps = steps
	}
	return 0, true
}

// executeRun runs the cluster (progress on stderr, one rewritten line on a
// terminal; SIGINT or SIGTERM stop it) and prints its report; the exit code
// is runUsage's.
func executeRun(rc cluster.RunConfig, format string, stdout, stderr io.Writer) int {
	var sw *statusWriter
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		sw = &statusWriter{w: stderr}
		rc.Cluster.Progress = sw
	} else {
		rc.Cluster.Progress = stderr
	}
	ctx, sig, stop := interruptContext()
	defer stop()
	res, err := cluster.Run(ctx, rc)
	if sw != nil {
		sw.done()
	}
	code := exitOK
	if s := sig(); s != nil {
		code = signalExit(s)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec run: %v\n", err)
		if code == exitOK {
			code = exitUsage
		}
		return code
	}
	if res.Interrupted != "" {
		fmt.Fprintf(stderr, "cdcspec run: interrupted (%s) during %s; partial report on stdout\n", res.Interrupted, res.InterruptedIn)
	}
	if format == "json" {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
		_, _ = stdout.Write(buf.Bytes())
	} else {
		writeRunText(stdout, res)
	}
	if code != exitOK {
		return code
	}
	if !res.OK() {
		return exitViolation
	}
	return exitOK
}

func runUsage(w io.Writer, fl *flag.FlagSet) {
	fmt.Fprintln(w, "usage: cdcspec run [--nodes N] [--tables N] [--duration D] [--faults LIST] [--bug NAME]... [--etcd host:port] [--kafka host:port] [--format json]")
	fmt.Fprintln(w, "\nRuns a real cluster and checks it: embedded etcd and kfake (or --etcd/--kafka, probed first: each must")
	fmt.Fprintf(w, "answer within %s), N capture processes of this binary, a changefeed over the synthetic upstream; injects\n", cluster.PreflightTimeout)
	fmt.Fprintln(w, "faults over --duration, heals, waits for the checkpoint, then checks the topic (no loss, per-key order) and")
	fmt.Fprintln(w, "the capture logs (cdcspec trace). Every ts it prints is a TiDB TSO (physical Unix ms << 18).")
	fmt.Fprintln(w, "SIGINT or SIGTERM in any phase stops the captures and prints \"interrupted\" and a partial report within 2 s.")
	fmt.Fprintln(w, "\nExample:\n  cdcspec run --duration 30s --faults kill-capture,sink-error,move-table")
	fmt.Fprintln(w, "\nExit status: 0 nothing lost and no violation, 1 otherwise, 2 usage or setup error (an --etcd or --kafka")
	fmt.Fprintln(w, "that does not answer), 130 after SIGINT and 143 after SIGTERM (128 + the signal, as a shell reports it).")
	fmt.Fprintln(w, "\nFlags:")
	printFlagDefaults(w, fl)
}

// interruptContext returns a context cancelled by the first SIGINT or
// SIGTERM (its cause names the signal) and the signal received (nil if
// none). After the first signal the handler is removed, so a second one
// ends the process at once.
func interruptContext() (context.Context, func() os.Signal, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	var got os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			mu.Lock()
			got = s
			mu.Unlock()
			signal.Stop(ch)
			cancel(fmt.Errorf("received %v", s))
		case <-done:
		}
	}()
	stop := func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
	return ctx, func() os.Signal { mu.Lock(); defer mu.Unlock(); return got }, stop
}

// signalExit is the shell's exit status of a process ended by s: 128 +
// the signal number (130 for SIGINT, 143 for SIGTERM).
func signalExit(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 128 + int(syscall.SIGINT)
}

// Bounds of cdcspec run's flags: one machine runs every capture process.
const (
	maxRunNodes  = 16
	maxRunTables = 64
	maxRunRate   = 1e6
	// maxRandomFaults bounds --faults random:N.
	maxRandomFaults = 50
)

type runFlags struct {
	nodes, tables             int
	rate                      float64
	duration, settle, ttl     time.Duration
	kafkaTimeout, ddlEvery    time.Duration
	kafkaListen, scenario     string
	etcd, kafka, bugs, faults listFlag
}

// checkRunFlags validates every flag of cdcspec run before anything
// starts: a value out of range is refused, never defaulted.
func checkRunFlags(fl *flag.FlagSet, f runFlags) error {
	set := map[string]bool{}
	fl.Visit(func(x *flag.Flag) { set[x.Name] = true })
	errs := []error{
		intIn("--nodes", f.nodes, 1, maxRunNodes),
		intIn("--tables", f.tables, 1, maxRunTables),
		floatIn("--rate", f.rate, 1, maxRunRate),
		durationIn("--duration", f.duration, time.Second, 24*time.Hour),
		durationIn("--settle-timeout", f.settle, time.Second, time.Hour),
		durationIn("--session-ttl", f.ttl, time.Second, time.Minute),
		durationIn("--kafka-timeout", f.kafkaTimeout, 100*time.Millisecond, time.Minute),
	}
	if set["ddl-every"] {
		errs = append(errs, durationIn("--ddl-every", f.ddlEvery, time.Second, time.Hour))
	}
	if f.kafkaListen != "" {
		errs = append(errs, hostPort("--kafka-listen", f.kafkaListen))
		if len(f.kafka) > 0 {
			errs = append(errs, errors.New("--kafka-listen is kfake's address; it cannot go with --kafka (external brokers)"))
		}
	}
	for _, e := range f.etcd {
		errs = append(errs, hostPortOrURL("--etcd", e))
	}
	for _, k := range f.kafka {
		errs = append(errs, hostPort("--kafka", k))
	}
	if _, err := spec.ParseBugs(f.bugs); err != nil {
		errs = append(errs, fmt.Errorf("--bug: %v", err))
	}
	if f.scenario != "" && set["faults"] {
		errs = append(errs, errors.New("--scenario has its own fault schedule; it cannot go with --faults"))
	}
	if len(f.faults) > 1 {
		for _, n := range f.faults {
			if n == "none" {
				errs = append(errs, fmt.Errorf("--faults %q: \"none\" cannot be combined with other faults", f.faults.String()))
				break
			}
		}
	}
	// The default mix leaves sink-error out with --kafka (DefaultFaultsFor).
	if len(f.kafka) > 0 && f.scenario == "" && contains(f.faults, string(spec.FaultSinkError)) {
		errs = append(errs, fmt.Errorf("--faults %s: sink-error times Kafka out in the embedded kfake; with --kafka name the faults without it", f.faults.String()))
	}
	if set["faults"] && len(f.faults) == 0 {
		errs = append(errs, errors.New(`--faults is empty (use "none" for no faults)`))
	}
	return firstErr(errs...)
}

func writeRunText(w io.Writer, r *cluster.Result) {
	verdict := "OK"
	if !r.OK() {
		verdict = "FAILED"
	}
	if r.Interrupted != "" {
		verdict = "INTERRUPTED (" + r.Interrupted + ") during " + r.InterruptedIn + ": partial report of what was checked until then"
	}
	fmt.Fprintf(w, "cdcspec run: %s\n", verdict)
	for _, u := range r.Unchecked {
		fmt.Fprintf(w, "unchecked:  %s\n", u)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "failure:    %s\n", f)
	}
	if !r.DataChecked {
		fmt.Fprintln(w, "data:       not checked (interrupted; see unchecked)")
	} else {
		writeRunData(w, r)
	}
	writeRunRest(w, r)
}

func writeRunData(w io.Writer, r *cluster.Result) {
	fmt.Fprintf(w, "data:       %s\n", r.Data.String())
	fmt.Fprintf(w, "            produced %d, delivered %d, lost %d, out_of_order %d, duplicates %d (topic %s)\n",
		r.Produced, r.Delivered, r.Lost, r.OutOfOrder, r.Duplicates, r.Topic)
	fmt.Fprintf(w, "            DDL ordering violations: %d (%d blocking DDLs and syncpoints committed, %d DDL messages delivered)\n",
		r.DDLOrderViolations, r.BlockingDDLs, r.Data.DDLs)
	fmt.Fprintf(w, "            (produced: row changes at or below the final checkpoint, which must all be in the topic;\n")
	fmt.Fprintf(w, "            beyond_checkpoint=%d: distinct changes delivered above it, allowed, not checked for loss;\n", r.Data.BeyondCheckpoint)
	fmt.Fprintf(w, "            first_delivery_regressions=%d: a key's change first delivered after a newer one of the key, as when a\n", r.Data.FirstDeliveryRegressions)
	fmt.Fprintf(w, "            failed produce is replayed after a restart (6, 5, 6); informational: out_of_order judges the last deliveries)\n")
	for _, e := range r.Data.Examples {
		fmt.Fprintf(w, "            %s\n", e.String())
	}
}

func writeRunRest(w io.Writer, r *cluster.Result) {
	if r.InterruptedIn == cluster.PhaseStartup {
		fmt.Fprintf(w, "logs:       %s\n", r.LogDir)
		return
	}
	fmt.Fprintf(w, "checkpoint: final %d (TSO; %s UTC), settled %v %s\n", r.FinalCheckpointTs, r.FinalCheckpointTime, r.Settled, r.SettleError)
	if fp := r.FaultPhase; fp.PlannedMs > 0 {
		if fp.Stretched {
			fmt.Fprintf(w, "faults:     phase STRETCHED: planned %.1fs (--duration), took %.1fs: %s\n", float64(fp.PlannedMs)/1000, float64(fp.ActualMs)/1000, strings.Join(fp.Why, "; "))
		} else {
			fmt.Fprintf(w, "faults:     phase planned %.1fs (--duration), took %.1fs\n", float64(fp.PlannedMs)/1000, float64(fp.ActualMs)/1000)
		}
	}
	fmt.Fprintf(w, "throughput: %.0f rows/s produced upstream and checked; checkpoint lag avg %.1fs peak %.1fs (fault phase and settling); %d capture restarts\n",
		r.RowsPerSec, float64(r.LagAvgMs)/1000, float64(r.LagPeakMs)/1000, r.Restarts)
	if r.HealToSettledMs >= 0 {
		fmt.Fprintf(w, "healed:     checkpoint passed the heal target %.1fs after healing\n", float64(r.HealToSettledMs)/1000)
	} else {
		fmt.Fprintln(w, "healed:     checkpoint never passed the heal target")
	}
	for _, h := range r.StoreHeals {
		fmt.Fprintf(w, "            TiKV store %v back at %.1fs: checkpoint passed that moment's resolved ts after %s\n",
			h.Stores, float64(h.AtMs)/1000, msOrNone(h.CaughtUpMs))
	}
	if r.TraceChecked {
		fmt.Fprintf(w, "trace:      %d findings, %d violations\n", len(r.Findings), r.Violations)
	} else {
		fmt.Fprintln(w, "trace:      not checked (interrupted; see unchecked)")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %s %s %s: %s\n", f.Severity, f.Property, f.Changefeed, f.Message)
	}
	fmt.Fprintln(w, "recovery:   per fault; lag peak until the next fault (the last fault's includes settling)")
	for _, rc := range r.Recovery {
		if rc.Error != "" {
			fmt.Fprintf(w, "  %-28s at %6.1fs  NOT APPLIED after %d attempt(s): %s\n", rc.Fault, float64(rc.AtMs)/1000, rc.Attempts, rc.Error)
			continue
		}
		fmt.Fprintf(w, "  %-28s at %6.1fs  %-40s warning after %s, normal after %s, lag peak %.1fs, lag <3s after %s\n",
			rc.Fault, float64(rc.AtMs)/1000, rc.Target, msOrNone(rc.FaultToWarningMs), msOrNone(rc.WarningToNormalMs),
			float64(rc.LagPeakMs)/1000, msOrNone(rc.LagBelow3sMs))
		if rc.Path != "" {
			reached := "reached"
			if !rc.PathReached {
				reached = "NOT reached"
			}
			fmt.Fprintf(w, "  %-28s                 path %s: %s\n", "", reached, rc.Path)
		}
		if rc.Attempts > 1 {
			fmt.Fprintf(w, "  %-28s                 applied at attempt %d\n", "", rc.Attempts)
		}
		if rc.Late != "" {
			fmt.Fprintf(w, "  %-28s                 planned at %.1fs: %s\n", "", float64(rc.PlannedAtMs)/1000, rc.Late)
		}
	}
	fmt.Fprintf(w, "endpoints:  etcd %s, kafka %s\n", strings.Join(r.Etcd, ","), strings.Join(r.Kafka, ","))
	ids := make([]string, 0, len(r.Captures))
	for id := range r.Captures {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(w, "            capture %s admin API http://%s\n", id, r.Captures[id])
	}
	fmt.Fprintf(w, "logs:       %s\n", r.LogDir)
}

func msOrNone(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"cdcspec/runtime/cluster"
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
	fl.Var(&etcd, "etcd", "external etcd endpoints (default: embedded etcd)")
	fl.Var(&kafka, "kafka", "external Kafka brokers (default: embedded kfake; the kafka fault needs kfake)")
	fl.Var(&bugs, "bug", "switch a catalogued bug on in every capture (repeatable)")
	fl.Var(&faults, "faults", "comma list of faults and domain actions, spread over --duration: "+strings.Join(cluster.Names(), ",")+
		" (default "+strings.Join(cluster.DefaultFaults, ",")+"; \"none\" for none; `cdcspec faults` describes each)")
	kafkaListen := fl.String("kafka-listen", "", "embedded kfake's address, e.g. 127.0.0.1:9092 (kcat can read the topic)")
	nodes := fl.Int("nodes", 3, "capture processes")
	tables := fl.Int("tables", 4, "initial upstream tables")
	rate := fl.Float64("rate", 2000, "upstream row changes per second (all initial tables)")
	duration := fl.Duration("duration", 60*time.Second, "fault phase length")
	settle := fl.Duration("settle-timeout", 120*time.Second, "how long to wait for the checkpoint after healing")
	scenario := fl.String("scenario", "", "run a seed's fault schedule instead: seed-5709, seed-3411, seed-6202, seed-5401, seed-5083, seed-3952, seed-9595")
	seed := fl.Uint64("seed", 1, "seed of the upstream and of fault targets")
	format := fl.String("format", "text", "report format: text or json")
	logDir := fl.String("log-dir", "", "directory for the logs (default a new temp dir)")
	ttl := fl.Duration("session-ttl", 5*time.Second, "captures' etcd session TTL")
	kto := fl.Duration("kafka-timeout", 2*time.Second, "captures' Kafka request timeout")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: cdcspec run [--nodes N] [--tables N] [--duration D] [--faults LIST] [--bug NAME]... [--scenario seed-5709] [--format json]")
		fmt.Fprintln(stderr, "\nStarts embedded etcd and kfake (or uses --etcd/--kafka), N capture processes of this binary, a changefeed")
		fmt.Fprintln(stderr, "over the synthetic upstream, injects faults, heals, waits for the checkpoint, then checks the topic")
		fmt.Fprintln(stderr, "(no loss, per-key order) and the capture logs (cdcspec trace).")
		fmt.Fprintln(stderr, "Exit status: 0 nothing lost and no violation, 1 otherwise, 2 usage or setup error.")
		fmt.Fprintln(stderr)
		fl.PrintDefaults()
	}
	if code, ok := parseFlags(fl, args, false, stderr); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "cdcspec run: unknown format %q (want text or json)\n", *format)
		return exitUsage
	}
	if *duration <= 0 || *settle <= 0 {
		fmt.Fprintln(stderr, "cdcspec run: --duration and --settle-timeout must be positive")
		return exitUsage
	}
	rc := cluster.RunConfig{Duration: *duration, SettleTimeout: *settle, Cluster: cluster.Config{
		Nodes: *nodes, Tables: *tables, Rate: *rate, Seed: *seed, Bugs: bugs, Etcd: etcd, Kafka: kafka,
		KafkaListen: *kafkaListen, LogDir: *logDir, SessionTTL: *ttl, KafkaTimeout: *kto}}
	switch {
	case *scenario != "":
		steps, legacy, err := cluster.Scenario(*scenario)
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec run: %v\n", err)
			return exitUsage
		}
		rc.Steps = steps
		rc.Cluster.LegacyRawWatermark = legacy
		nodesSet := false
		fl.Visit(func(f *flag.Flag) { nodesSet = nodesSet || f.Name == "nodes" })
		if n := cluster.ScenarioNodes(*scenario); n > 0 && !nodesSet {
			rc.Cluster.Nodes = n
		}
		durSet := false
		fl.Visit(func(f *flag.Flag) { durSet = durSet || f.Name == "duration" })
		if last := steps[len(steps)-1].At + 20*time.Second; !durSet || rc.Duration < last {
			rc.Duration = last
		}
	case len(faults) == 1 && faults[0] == "none":
		rc.Steps = []cluster.Step{}
	case len(faults) > 0:
		steps, err := cluster.Schedule(faults, *duration)
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec run: --faults: %v\n", err)
			return exitUsage
		}
		rc.Steps = steps
	}
	var sw *statusWriter
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		sw = &statusWriter{w: stderr}
		rc.Cluster.Progress = sw
	} else {
		rc.Cluster.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := cluster.Run(ctx, rc)
	if sw != nil {
		sw.done()
	}
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec run: %v\n", err)
		return exitUsage
	}
	if *format == "json" {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
		_, _ = stdout.Write(buf.Bytes())
	} else {
		writeRunText(stdout, res)
	}
	if !res.OK() {
		return exitViolation
	}
	return exitOK
}

func writeRunText(w io.Writer, r *cluster.Result) {
	verdict := "OK"
	if !r.OK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "cdcspec run: %s\n", verdict)
	fmt.Fprintf(w, "data:       %s\n", r.Data.String())
	fmt.Fprintf(w, "            produced %d, delivered %d, lost %d, out_of_order %d, duplicates %d (topic %s)\n",
		r.Produced, r.Delivered, r.Lost, r.OutOfOrder, r.Duplicates, r.Topic)
	for _, e := range r.Data.Examples {
		fmt.Fprintf(w, "            %s\n", e.String())
	}
	fmt.Fprintf(w, "checkpoint: final %d (%s), settled %v %s\n", r.FinalCheckpointTs,
		time.UnixMilli(int64(r.FinalCheckpointTs)).UTC().Format(time.RFC3339Nano), r.Settled, r.SettleError)
	fmt.Fprintf(w, "throughput: %.0f rows/s produced upstream and checked; checkpoint lag avg %.1fs peak %.1fs; %d capture restarts\n",
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
	fmt.Fprintf(w, "trace:      %d findings, %d violations\n", len(r.Findings), r.Violations)
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %s %s %s: %s\n", f.Severity, f.Property, f.Changefeed, f.Message)
	}
	fmt.Fprintln(w, "recovery:")
	for _, rc := range r.Recovery {
		if rc.Error != "" {
			fmt.Fprintf(w, "  %-28s at %6.1fs  not injected: %s\n", rc.Fault, float64(rc.AtMs)/1000, rc.Error)
			continue
		}
		fmt.Fprintf(w, "  %-28s at %6.1fs  %-40s warning after %s, normal after %s, lag peak %.1fs, lag <3s after %s\n",
			rc.Fault, float64(rc.AtMs)/1000, rc.Target, msOrNone(rc.FaultToWarningMs), msOrNone(rc.WarningToNormalMs),
			float64(rc.LagPeakMs)/1000, msOrNone(rc.LagBelow3sMs))
	}
	fmt.Fprintf(w, "logs:       %s\n", r.LogDir)
}

func msOrNone(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

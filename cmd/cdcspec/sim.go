package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/spec"
)

func init() {
	register("sim", "run the implementation in deterministic simulation with random faults and check every property", runSim)
}

// maxSimSeeds bounds -seeds (a million seeds is days of CPU).
const maxSimSeeds = 1_000_000

func runSim(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 1, "first seed")
	seeds := fs.Int("seeds", 1, "number of seeds to run (seed, seed+1, ...)")
	bugs := fs.String("bugs", "", "comma-separated catalogued bugs to switch back on (see `cdcspec bugs`)")
	rawWatermark := fs.Bool("raw-watermark", false, "pre-#4548 maintainer checkpoint (raw watermark, no startTs clamp)")
	nodes := fs.Int("nodes", 3, fmt.Sprintf("initial captures, 1..%d", sim.MaxChaosNodes))
	tables := fs.Int("tables", 0, fmt.Sprintf("initial tables, 0..%d (0: 3 + seed%%4)", sim.MaxChaosTables))
	feeds := fs.Int("changefeeds", 0, fmt.Sprintf("changefeeds, 0..%d (0: 1, or 2 for seeds divisible by 3)", sim.MaxChaosChangefeeds))
	steps := fs.Int("steps", 40, fmt.Sprintf("random actions and faults per seed, 1..%d", sim.MaxChaosSteps))
	faults := fs.String("faults", "", "comma-separated faults the random steps may draw (default: every fault they draw; `cdcspec faults` lists them); domain actions are always drawn")
	logPath := fs.String("log", "", "write the TiCDC-format log of each seed to this file ('-' = stdout; with -seeds > 1, a directory)")
	level := fs.String("level", "info", "log level: debug, info, warn, error")
	ddls := fs.Bool("ddls", false, "also draw blocking DDLs (alter, drop, truncate, rename, DB-level, syncpoint) among the random actions")
	delivery := fs.String("delivery", string(spec.DeliveryMessageCenter), "message delivery: message-center (TiCDC HEAD, default), per-type-streams or reordering (stronger than TiCDC: duplicates, stale copies, overtaking)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cdcspec sim [-seed N] [-seeds N] [-nodes N] [-tables N] [-changefeeds N] [-steps N] [-faults LIST] [-ddls] [-bugs LIST] [-log FILE]")
		fmt.Fprintln(stderr, "\nRuns the implementation in deterministic simulation: random actions and faults, heal, quiescence, every property checked.")
		fmt.Fprintln(stderr, "Exit status: 0 every seed passed, 1 a seed failed, 2 usage error.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, false, stderr); !ok {
		return code
	}
	if err := firstErr(
		intIn("-seeds", *seeds, 1, maxSimSeeds),
		intIn("-nodes", *nodes, 1, sim.MaxChaosNodes),
		intIn("-tables", *tables, 0, sim.MaxChaosTables),
		intIn("-changefeeds", *feeds, 0, sim.MaxChaosChangefeeds),
		intIn("-steps", *steps, 1, sim.MaxChaosSteps),
		oneOf("-level", *level, logLevels...),
	); err != nil {
		fmt.Fprintf(stderr, "cdcspec sim: %v\n", err)
		return exitUsage
	}
	if *seed > ^uint64(0)-uint64(*seeds) {
		fmt.Fprintf(stderr, "cdcspec sim: -seed %d + -seeds %d overflows uint64\n", *seed, *seeds)
		return exitUsage
	}
	dl, err := spec.ParseDelivery(*delivery)
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec sim: -delivery: %v\n", err)
		return exitUsage
	}
	b, err := spec.ParseBugs(strings.Split(*bugs, ","))
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec sim: -bugs: %v\n", err)
		return exitUsage
	}
	var chaosFaults []spec.Fault
	if *faults != "" {
		if chaosFaults, err = spec.ParseFaults(strings.Split(*faults, ",")); err == nil {
			err = sim.CheckChaosFaults(chaosFaults)
		}
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec sim: -faults: %v\n", err)
			return exitUsage
		}
	}
	opts := core.Options{Bugs: b}
	opts.Legacy.RawWatermarkCheckpoint = *rawWatermark
	if *logPath != "" && *logPath != "-" && *seeds > 1 {
		if err := os.MkdirAll(*logPath, 0o755); err != nil {
			fmt.Fprintf(stderr, "cdcspec sim: -log: %v\n", err)
			return exitUsage
		}
	}
	failed := 0
	for s := *seed; s < *seed+uint64(*seeds); s++ {
		var buf bytes.Buffer
		cfg := sim.ChaosConfig{Seed: s, Nodes: *nodes, Tables: *tables, Changefeeds: *feeds, Steps: *steps, Options: opts, Faults: chaosFaults, Delivery: dl, BlockingDDLs: *ddls}
		if *logPath != "" {
			cfg.Log, cfg.LogLevel = &buf, *level
		}
		res := sim.RunChaos(cfg)
		status := "ok"
		if !res.OK() {
			status = "FAIL"
			failed++
		}
		fmt.Fprintf(stdout, "seed %d: %s, %d messages, converged=%t, %d violation(s)\n", s, status, res.Delivered, res.Converged, len(res.Violations))
		if !res.Converged {
			fmt.Fprintf(stdout, "  not converged: %s\n", res.Why)
		}
		for i, v := range res.Violations {
			if i == 5 {
				fmt.Fprintf(stdout, "  ... %d more\n", len(res.Violations)-5)
				break
			}
			fmt.Fprintf(stdout, "  %s\n", v)
		}
		if *logPath != "" {
			if !res.OK() {
				res.Sim.DumpState(&buf)
			}
			if err := writeLog(*logPath, *seeds > 1, s, buf.Bytes(), stdout); err != nil {
				fmt.Fprintf(stderr, "cdcspec sim: %v\n", err)
				return exitUsage
			}
		}
	}
	fmt.Fprintf(stdout, "%d of %d seed(s) failed; bugs on: %s; delivery: %s\n", failed, *seeds, orNone(b.Names()), dl.Label())
	if failed > 0 {
		return exitViolation
	}
	return exitOK
}

func writeLog(path string, dir bool, seed uint64, b []byte, stdout io.Writer) error {
	if path == "-" {
		_, err := stdout.Write(b)
		return err
	}
	if dir {
		path = filepath.Join(path, fmt.Sprintf("seed-%d.log", seed))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("-log: %v", err)
	}
	fmt.Fprintf(stdout, "  log: %s\n", path)
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none (every fix on)"
	}
	return strings.Join(s, ",")
}

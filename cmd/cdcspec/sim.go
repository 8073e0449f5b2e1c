package main

import (
	"bytes"
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
	register("sim", simHelp.summary, runSim)
}

// maxSimSeeds bounds -seeds (a million seeds is days of CPU).
const maxSimSeeds = 1_000_000

// simHelp is `cdcspec sim -h`.
var simHelp = help{
	summary: "run the implementation in deterministic simulation with random faults and check every property",
	usage:   "[flags]",
	examples: []string{
		"cdcspec sim --seeds 100",
		"cdcspec sim --seeds 200 --bug regressed-checkpoint-drops-error   # a catalogued bug switched back on",
		"cdcspec sim --seed 7 --faults kill-capture,sink-error --log seed7.log",
	},
	exits: []string{
		"0  every seed passed",
		"1  a seed failed (a property violated or no convergence)",
		"2  usage error",
	},
}

func runSim(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sim", simHelp, stdout, stderr)
	seed := fs.Uint64("seed", 1, "first seed")
	seeds := fs.Int("seeds", 1, "number of seeds to run (seed, seed+1, ...)")
	var bugs stringList
	fs.Var(&bugs, "bug", "switch a catalogued bug back on by `name` (repeatable; 'cdcspec bugs' lists them)")
	fs.Func("bugs", "", func(string) error {
		return fmt.Errorf("-bugs LIST is gone: give --bug NAME once per bug (repeatable), as check and run take it")
	})
	fs.hide("bugs")
	rawWatermark := fs.Bool("raw-watermark", false, "pre-#4548 maintainer checkpoint (raw watermark, no startTs clamp)")
	nodes := fs.Int("nodes", 3, fmt.Sprintf("initial captures, 1..%d", sim.MaxChaosNodes))
	tables := fs.Int("tables", 0, fmt.Sprintf("initial tables, 0..%d (0: 3 + seed%%4)", sim.MaxChaosTables))
	feeds := fs.Int("changefeeds", 0, fmt.Sprintf("changefeeds, 0..%d (0: 1, or 2 for seeds divisible by 3)", sim.MaxChaosChangefeeds))
	steps := fs.Int("steps", 40, fmt.Sprintf("random actions and faults per seed, 1..%d", sim.MaxChaosSteps))
	faults := fs.String("faults", "", "comma-separated fault `names` the random steps may draw (default: every fault they draw; 'cdcspec faults' lists them); domain actions are always drawn")
	logPath := fs.String("log", "", "write the TiCDC-format log of each seed to this `file` ('-' = stdout; with --seeds > 1, a directory)")
	level := fs.String("level", "info", "log `level`: debug, info, warn, error")
	ddls := fs.Bool("ddls", false, "also draw blocking DDLs (alter, drop, truncate, rename, DB-level, syncpoint) among the random actions")
	delivery := fs.String("delivery", string(spec.DeliveryMessageCenter), "message `delivery`: message-center (TiCDC HEAD, default), per-type-streams or reordering (stronger than TiCDC: duplicates, stale copies, overtaking)")
	if code, ok := fs.parse(args, false); !ok {
		return code
	}
	if err := firstErr(
		intIn("--seeds", *seeds, 1, maxSimSeeds),
		intIn("--nodes", *nodes, 1, sim.MaxChaosNodes),
		intIn("--tables", *tables, 0, sim.MaxChaosTables),
		intIn("--changefeeds", *feeds, 0, sim.MaxChaosChangefeeds),
		intIn("--steps", *steps, 1, sim.MaxChaosSteps),
		oneOf("--level", *level, logLevels...),
	); err != nil {
		return fs.usageError("%v", err)
	}
	if *seed > ^uint64(0)-uint64(*seeds) {
		return fs.usageError("--seed %d + --seeds %d overflows uint64", *seed, *seeds)
	}
	dl, err := spec.ParseDelivery(*delivery)
	if err != nil {
		return fs.usageError("--delivery: %v", err)
	}
	b, err := spec.ParseBugs(bugs)
	if err != nil {
		return fs.usageError("--bug: %v", err)
	}
	// The log's place is checked before the run: a run of many seeds must
	// not end in an unwritable path.
	if *logPath != "" && *logPath != "-" {
		if *seeds > 1 {
			if err := os.MkdirAll(*logPath, 0o755); err != nil {
				return fs.usageError("--log: %v", err)
			}
		} else if f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_CREATE, 0o644); err != nil {
			return fs.usageError("--log: %v", err)
		} else {
			f.Close()
		}
	}
	var chaosFaults []spec.Fault
	if *faults != "" {
		if chaosFaults, err = spec.ParseFaults(strings.Split(*faults, ",")); err == nil {
			err = sim.CheckChaosFaults(chaosFaults)
		}
		if err != nil {
			return fs.usageError("--faults: %v", err)
		}
	}
	opts := core.Options{Bugs: b}
	opts.Legacy.RawWatermarkCheckpoint = *rawWatermark
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
		return fmt.Errorf("--log: %v", err)
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

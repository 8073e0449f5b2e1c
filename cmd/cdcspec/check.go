package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"cdcspec/model"
	"cdcspec/report"
	"cdcspec/search"
	"cdcspec/spec"
)

func init() {
	register("check", checkHelp.summary, runCheck)
}

// checkHelp is `cdcspec check -h`.
var checkHelp = help{
	summary: "explore the model of TiCDC's control plane exhaustively (or by random walks)",
	usage:   "[flags]",
	examples: []string{
		"cdcspec check                                            # the default configuration, every property",
		"cdcspec check --bug regressed-checkpoint-drops-error     # a catalogued bug back on: a counterexample",
		"cdcspec check --config merge --memory 2GB                # a bigger configuration under a memory budget",
	},
	exits: []string{
		"0  every property holds in the explored space: every schedule, or every schedule within the delay bound (the configuration's stated bound, or --delay-bound K): \"complete up to K delays\"",
		"1  a property is violated (the counterexample is written to --artifacts)",
		"2  usage error",
		"3  incomplete: a bound (--max-states, --max-depth, the memory budget, --time, --delay-budget before the first bound completed) or an interrupt cut the search, or random walks found nothing",
		"   --matrix: 1 if any row found a violation, else 3 if any row did not complete (every schedule, or every schedule within its stated delay bound), else 0",
	},
}

// maxWorkers bounds --workers.
const maxWorkers = 256

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// checkJSON is the --format json output.
type checkJSON struct {
	Result          string     `json:"result"`
	Reason          string     `json:"reason,omitempty"`
	Config          configJSON `json:"config"`
	Bugs            []string   `json:"bugs"`
	DistinctStates  int64      `json:"distinct_states"`
	Transitions     int64      `json:"transitions"`
	Depth           int        `json:"depth"`
	Seconds         float64    `json:"seconds"`
	StatesPerSecond float64    `json:"states_per_second"`
	SymmetryGroup   int        `json:"symmetry_group"`
	Collision       float64    `json:"collision_probability"`
	SpilledBytes    int64      `json:"spilled_bytes,omitempty"`
	// Reduction names the reduction beside symmetry ("none", "delay-bound
	// k=K"); CompleteUpToDelays is K when every schedule within K delays
	// was explored without a violation and nothing else cut the search.
	Reduction          string `json:"reduction"`
	CompleteUpToDelays *int   `json:"complete_up_to_delays,omitempty"`
	// DelayOrigin says where the delay bound came from: "stated bound of
	// configuration NAME", "--delay-bound", or --delay-budget's deepening.
	DelayOrigin string         `json:"delay_bound_origin,omitempty"`
	DelayPruned int64          `json:"delay_pruned_transitions,omitempty"`
	DelayTries  []delayTryJSON `json:"delay_tries,omitempty"` // --delay-budget: every search run
	Coverage    *coverageJSON  `json:"coverage,omitempty"`
	Properties  []propJSON     `json:"properties"`
	Violation   *violationJSON `json:"violation,omitempty"`
	Artifacts   string         `json:"artifacts,omitempty"`
}

// configJSON is the model configuration and the search bounds, as one
// object (the bounds were once model fields; the keys stay).
type configJSON struct {
	model.Config
	MaxDepth  int `json:"max_depth,omitempty"`
	MaxStates int `json:"max_states,omitempty"`
	// DelayBound is --delay-bound (nil: none).
	DelayBound *int   `json:"delay_bound,omitempty"`
	Liveness   bool   `json:"liveness"`
	Features   string `json:"features"`
	Mode       string `json:"mode"`
	Seed       uint64 `json:"seed,omitempty"`
	Walks      int    `json:"walks,omitempty"`
	Memory     int64  `json:"memory_bytes,omitempty"`
	// MemoryDefault: the budget is the default (no --memory).
	MemoryDefault bool   `json:"memory_default,omitempty"`
	Time          string `json:"time,omitempty"`
}

// coverageJSON is a swarm's coverage (--time).
type coverageJSON struct {
	Walks        int64            `json:"walks"`
	Searches     int64            `json:"bounded_searches"`
	Depths       []int64          `json:"new_states_by_depth"`
	Actions      map[string]int64 `json:"transitions_by_action"`
	SafetyJudged int64            `json:"safety_judged_transitions"`
	FairRuns     map[string]int64 `json:"fair_schedules_by_verdict"`
	Safety       []string         `json:"safety_properties"`
	Liveness     []string         `json:"liveness_properties"`
}

// delayTryJSON is one search of --delay-budget.
type delayTryJSON struct {
	K              int     `json:"k"`
	Result         string  `json:"result"`
	Reason         string  `json:"reason,omitempty"`
	DistinctStates int64   `json:"distinct_states"`
	Depth          int     `json:"depth"`
	Seconds        float64 `json:"seconds"`
}

type propJSON struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

type violationJSON struct {
	Property string     `json:"property"`
	Message  string     `json:"message"`
	Steps    []stepJSON `json:"steps"`
}

type stepJSON struct {
	Actor  string       `json:"actor"`
	Action model.Action `json:"action"`
	Text   string       `json:"text"`
	Events []string     `json:"events"`
	Fair   bool         `json:"after_heal,omitempty"`
}

// checkFlags are check's flags: the model configuration's (model), the
// search's, the output's, and --matrix's.
type checkFlags struct {
	model                                           checkModelFlags
	liveness, symmetry, simulate, replayImpl        *bool
	matrix, matrixList, rowDeepen                   *bool
	workers, maxStates, maxDepth, delayBound        *int
	walks, walkDepth                                *int
	memory, spillDir, format, artifacts, matrixRows *string
	budget, delayBudget, rowTime                    *time.Duration
	seed                                            *uint64
}

// defineCheckFlags defines check's flags on fs.
func defineCheckFlags(fs *cmdFlags) *checkFlags {
	f := &checkFlags{}
	mf := &f.model
	mf.config = fs.String("config", "default", "standard configuration `name`: "+strings.Join(model.StandardNames(), ", "))
	mf.nodes = fs.Int("nodes", 0, "node slots (2..3)")
	mf.tables = fs.Int("tables", 0, "tables at changefeed creation")
	mf.ddl = fs.Int("ddl-tables", 0, "tables created by DDL while running")
	mf.tsMax = fs.Int("ts", 0, "upstream resolved ts range 1..N")
	mf.crashes = fs.Int("crashes", 0, "capture suicides")
	mf.faults = fs.Int("fault-budget", 0, "shorthand: crashes = sink errors = N (fault names are run's and sim's --faults)")
	fs.Func("faults", "", func(string) error {
		return fmt.Errorf("check's fault count is now --fault-budget N (crashes = sink errors = N); --faults takes fault names in run and sim ('cdcspec faults' lists them)")
	})
	fs.hide("faults")
	mf.restarts = fs.Int("restarts", 0, "restarts of crashed nodes")
	mf.drops = fs.Int("drops", 0, "messages lost")
	mf.dups = fs.Int("dups", 0, "messages duplicated")
	mf.sinkErrs = fs.Int("sink-errors", 0, "retryable sink errors")
	mf.stalls = fs.Int("stalls", 0, "upstream stalls")
	mf.fastFails = fs.Int("fast-fails", 0, "unretryable dispatcher errors (fault fast-fail-error)")
	mf.clientOps = fs.Int("client-ops", 0, "pause, resume and remove requests, in all")
	mf.coordFailovers = fs.Int("coord-failovers", 0, "coordinator failovers")
	mf.maintMoves = fs.Int("maint-moves", 0, "maintainer moves by the coordinator (balance, drain)")
	mf.moves = fs.Bool("moves", false, "the maintainer may move spans (balance)")
	mf.maxMoves = fs.Int("max-moves", 0, "bound the span moves of --moves (0: unbounded)")
	mf.puller = fs.Bool("puller", false, "model the upstream kv client (seed 004)")
	f.liveness = fs.Bool("liveness", true, "check the liveness properties")
	fs.Var(&mf.bugs, "bug", "switch a catalogued bug back on by `name` (repeatable); see 'cdcspec bugs'")
	fs.Var(&mf.without, "without", "switch a protocol `feature` off (repeatable): "+strings.Join(model.FeatureNames(), ", "))
	fs.Var(&mf.mutate, "mutate", "switch a `guard` of the model off (repeatable; make mutate lists them)")
	f.workers = fs.Int("workers", 0, fmt.Sprintf("parallel workers, 1..%d (default GOMAXPROCS)", maxWorkers))
	f.maxStates = fs.Int("max-states", 0, "stop at exactly this many distinct states (exit 3)")
	f.memory = fs.String("memory", "", "memory `budget`, e.g. 2GB or 512MB: past it the frontier spills to disk, and the check stops (exit 3) when the visited set would not fit (default: half of the machine's memory, at most 8 GB)")
	f.spillDir = fs.String("spill-dir", "", "`directory` for the spill files of the memory budget (default: the system's temporary directory)")
	f.symmetry = fs.Bool("symmetry", true, "reduce by symmetry over interchangeable node slots (3 nodes)")
	f.budget = fs.Duration("time", 0, "swarm mode: parallel random walks and bounded searches for this long (e.g. 10m), then a coverage report (exit 3 without a violation)")
	f.maxDepth = fs.Int("max-depth", 0, "do not expand states deeper than this (exit 3 if it cut)")
	f.delayBound = fs.Int("delay-bound", 0, fmt.Sprintf("explore only the schedules within `K` delays (1..%d) of the default scheduler "+
		"(docs/reduction.md); the result is \"complete up to K delays\" (exit 0), or a violation; 0: every schedule "+
		"(default: the configuration's stated bound; 'cdcspec check --matrix --list' shows them)", search.MaxDelayBound))
	f.delayBudget = fs.Duration("delay-budget", 0, "run delay-bounded searches for K = --delay-bound (default: the stated bound, or 0), K+1, ... "+
		"for this long (e.g. 10m) and report the largest K that completed, or the first violation")
	f.format = fs.String("format", "text", "output `format`: text or json")
	f.simulate = fs.Bool("simulate", false, "random walks instead of exhaustive search")
	f.seed = fs.Uint64("seed", 1, "random-walk seed")
	f.walks = fs.Int("walks", 1000, "random walks")
	f.walkDepth = fs.Int("walk-depth", 60, "steps per random walk")
	f.artifacts = fs.String("artifacts", "", "`directory` for the counterexample files (default: a new temporary directory)")
	f.replayImpl = fs.Bool("replay-impl", false, "replay the model's counterexample on the implementation's simulation (impl/sim) and report whether it shows the same violation")
	f.matrix = fs.Bool("matrix", false, "run every row of the configuration matrix (features x faults, docs/matrix.md), each within its stated delay bound, one after the other; --memory defaults to 3GB")
	f.matrixRows = fs.String("matrix-rows", "", "with --matrix: run only the rows whose names match this regular expression")
	f.rowTime = fs.Duration("row-time", 10*time.Minute, "with --matrix: each row's wall-clock budget (a row it stops is incomplete)")
	f.matrixList = fs.Bool("list", false, "with --matrix: list the rows and which rows cover each feature x fault pair, and run nothing")
	f.rowDeepen = fs.Bool("row-deepen", false, "with --matrix: after a row completes up to its stated delay bound K, search K+1, K+2, ... until --row-time, and report the largest K that completed")
	return f
}

// bounds are the search bounds the flags give, before the delay bound and
// the memory budget.
func (f *checkFlags) bounds() search.Bounds {
	return search.Bounds{Workers: *f.workers, MaxStates: *f.maxStates, MaxDepth: *f.maxDepth, SafetyOnly: !*f.liveness,
		NoSymmetry: !*f.symmetry, SpillDir: *f.spillDir}
}

// runCheck is `cdcspec check`: the flags, then --matrix or one search, its
// counterexample's artifacts, and the report (checkPlan's steps).
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check", checkHelp, stdout, stderr)
	f := defineCheckFlags(fs)
	if code, ok := fs.parse(args, false); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.validateCommon(set); err != nil {
		return fs.usageError("%v", err)
	}
	if *f.matrix {
		return f.runMatrix(fs, set, args, stdout, stderr)
	}
	for _, name := range []string{"matrix-rows", "row-time", "list", "row-deepen"} {
		if set[name] {
			fmt.Fprintf(stderr, "cdcspec check: --%s needs --matrix\n", name)
			return exitUsage
		}
	}
	p, code, ok := f.plan(fs, set, stderr)
	if !ok {
		return code
	}
	// The search's own accounting (tables, frontier, trail) gets half of
	// the budget (plan); the rest is the Go runtime's (garbage not yet
	// collected, fragmentation, stacks, the workers' scratch). The runtime's
	// soft limit makes the collector work harder near the budget.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(p.memBytes / 20 * 17))
	// An interrupt (Ctrl-C, SIGTERM) stops the search: it reports how far
	// it got, exits 3 and removes its spill files.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	p.bounds.Stop = ctx.Done()
	res, tries, err := p.search(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec check: %v\n", err)
		return exitUsage
	}
	dir := p.counterexample(&res, args, stdout, stderr)
	code = checkExit(&res, tries)
	if p.format == "json" {
		p.writeJSON(stdout, stderr, &res, tries, dir)
		return code
	}
	printCheck(stdout, checkReport{cfg: &p.cfg, res: &res, mode: p.mode, tries: tries, memBytes: p.memBytes, memDefault: p.memDefault,
		searchMemory: p.bounds.Memory, dir: dir, delayOrigin: p.delayOrigin})
	return code
}

// validateCommon checks the flags both --matrix and one search take.
func (f *checkFlags) validateCommon(set map[string]bool) error {
	if err := firstErr(
		oneOf("--format", *f.format, "text", "json"),
		intIn("--max-states", *f.maxStates, 0, math.MaxInt32),
		intIn("--max-depth", *f.maxDepth, 0, math.MaxInt32),
		intIn("--walks", *f.walks, 1, math.MaxInt32),
		intIn("--walk-depth", *f.walkDepth, 1, 1_000_000),
	); err != nil {
		return err
	}
	if set["workers"] {
		if err := intIn("--workers", *f.workers, 1, maxWorkers); err != nil {
			return err
		}
	}
	for _, b := range f.model.bugs {
		if _, ok := spec.LookupBug(b); !ok {
			return fmt.Errorf("unknown --bug %q (known: %s)", b, strings.Join(spec.BugNames(), ", "))
		}
	}
	return nil
}

// runMatrix is `check --matrix`.
func (f *checkFlags) runMatrix(fs *cmdFlags, set map[string]bool, args []string, stdout, stderr io.Writer) int {
	o := matrixOpts{rows: *f.matrixRows, rowTime: *f.rowTime, format: *f.format, artifacts: *f.artifacts, list: *f.matrixList, deepen: *f.rowDeepen,
		bounds: f.bounds()}
	if set["delay-bound"] {
		if err := intIn("--delay-bound", *f.delayBound, 0, search.MaxDelayBound); err != nil {
			return fs.usageError("%v", err)
		}
		o.delayBound = f.delayBound
	}
	return checkMatrix(set, o, *f.memory, args, stdout, stderr)
}

// checkPlan is one search as the flags ask for it: the configuration, the
// mode, the bounds (with the delay bound and the memory budget), the walks,
// and what the report needs to say.
type checkPlan struct {
	cfg         model.Config
	mode        string // exhaustive | simulate | swarm
	bounds      search.Bounds
	walk        search.Walks
	swarmTime   time.Duration // swarm: --time
	delayBudget time.Duration // exhaustive with --delay-budget, else 0
	delayOrigin string        // why the search is delay-bounded: the stated bound or a flag
	memBytes    int64
	memDefault  bool // no --memory
	format      string
	artifacts   string
	replayImpl  bool
	bugs        []string
}

// plan builds the configuration and checks the flags of one search against
// each other; ok is false with the exit code after a usage error.
func (f *checkFlags) plan(fs *cmdFlags, set map[string]bool, stderr io.Writer) (p checkPlan, code int, ok bool) {
	cfg, usage, ok := f.model.build(fs, set, stderr)
	if !ok {
		return p, usage, false
	}
	simulate, walks, walkDepth := *f.simulate, *f.walks, *f.walkDepth
	// A configuration too big for exhaustive search names its random walks,
	// unless a delay bound makes the search small enough.
	if cfg.Walks > 0 && cfg.DelayBound == 0 && !set["simulate"] && !set["delay-bound"] && !set["delay-budget"] {
		simulate = true
		if !set["walks"] {
			walks = cfg.Walks
		}
		if !set["walk-depth"] && cfg.WalkDepth > 0 {
			walkDepth = cfg.WalkDepth
		}
	}
	p = checkPlan{cfg: cfg, mode: "exhaustive", bounds: f.bounds(), format: *f.format, artifacts: *f.artifacts,
		replayImpl: *f.replayImpl, bugs: []string(f.model.bugs)}
	switch {
	case simulate:
		p.mode = "simulate"
	case set["time"]:
		p.mode, p.swarmTime = "swarm", *f.budget
	case set["delay-budget"]:
		p.delayBudget = *f.delayBudget
	}
	// The delay bound: --delay-bound K (0: every schedule), else the
	// configuration's stated bound (Config.DelayBound), which random walks
	// and swarms do not take.
	if set["delay-bound"] && (*f.delayBound < 0 || *f.delayBound > search.MaxDelayBound) {
		fmt.Fprintf(stderr, "cdcspec check: --delay-bound must be in 0..%d, got %d\n", search.MaxDelayBound, *f.delayBound)
		return p, exitUsage, false
	}
	switch {
	case set["delay-bound"]:
		p.bounds.DelayBounded, p.bounds.DelayBound = *f.delayBound > 0, *f.delayBound
		p.delayOrigin = "--delay-bound"
	case !simulate && !set["time"] && cfg.DelayBound > 0:
		p.bounds = cfg.StatedBounds(p.bounds)
		p.delayOrigin = "stated bound of configuration " + *f.model.config
	}
	if (set["delay-bound"] || set["delay-budget"]) && (simulate || set["time"]) {
		fmt.Fprintln(stderr, "cdcspec check: --delay-bound and --delay-budget bound the exhaustive search; they do not apply to --simulate or --time")
		return p, exitUsage, false
	}
	if set["delay-budget"] && *f.delayBudget <= 0 {
		fmt.Fprintf(stderr, "cdcspec check: --delay-budget must be > 0, got %s\n", *f.delayBudget)
		return p, exitUsage, false
	}
	p.memDefault = !set["memory"]
	if p.memDefault {
		p.memBytes = defaultMemoryBudget()
	} else {
		var err error
		if p.memBytes, err = parseBytes(*f.memory); err != nil {
			return p, fs.usageError("--memory: %v", err), false
		}
	}
	// The search's own accounting gets half of the budget (runCheck).
	p.bounds.Memory = p.memBytes / 2
	if set["time"] && *f.budget <= 0 {
		fmt.Fprintf(stderr, "cdcspec check: --time must be > 0, got %s\n", *f.budget)
		return p, exitUsage, false
	}
	if set["time"] && simulate {
		fmt.Fprintln(stderr, "cdcspec check: --time (swarm) and --simulate (random walks) are two modes; choose one")
		return p, exitUsage, false
	}
	p.walk = search.Walks{Seed: *f.seed, Count: walks, Depth: walkDepth}
	for _, err := range []error{p.bounds.Validate(), p.walk.Validate()} {
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec check: %v\n", err)
			return p, exitUsage, false
		}
	}
	return p, 0, true
}

// search runs the plan's search, with a progress line on a terminal; tries
// are --delay-budget's searches.
func (p *checkPlan) search(stderr io.Writer) (res model.Result, tries []search.Stats, err error) {
	progress, clear := progressWriter(stderr, p.memBytes)
	defer clear()
	switch {
	case p.mode == "simulate":
		res, err = model.Simulate(p.cfg, p.bounds, p.walk)
	case p.mode == "swarm":
		res, err = model.Swarm(p.cfg, p.bounds, search.Swarm{Seed: p.walk.Seed, Time: p.swarmTime}, progress)
	case p.delayBudget > 0:
		res, tries, err = model.CheckDelays(p.cfg, p.bounds, p.delayBudget, progress)
		p.delayOrigin = "--delay-budget " + p.delayBudget.String() + ": the largest bound that completed"
	default:
		res, err = model.Check(p.cfg, p.bounds, progress)
	}
	return res, tries, err
}

// counterexample writes a violation's artifacts and, with --replay-impl,
// replays it on the implementation's simulation; it returns the artifacts'
// directory ("" without a violation).
func (p *checkPlan) counterexample(res *model.Result, args []string, stdout, stderr io.Writer) string {
	if res.Violation == nil {
		return ""
	}
	dir, err := writeArtifacts(p.artifacts, res, args)
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec check: writing the counterexample: %v\n", err)
	}
	if p.replayImpl {
		w := stdout
		if p.format == "json" {
			w = stderr
		}
		if _, err := replayImpl(p.cfg, res.Violation, p.bugs, dir, w); err != nil {
			fmt.Fprintf(stderr, "cdcspec check: replaying on the implementation: %v\n", err)
		}
	}
	return dir
}

// checkExit is check's exit code for a search's result (checkHelp.exits).
func checkExit(res *model.Result, tries []search.Stats) int {
	upTo, boundedOK := res.CompleteUpToDelays()
	switch {
	case res.Outcome == search.OK:
		return exitOK
	case res.Outcome == search.Violation:
		return exitViolation
	case boundedOK && (len(tries) == 0 || upTo >= tries[0].DelayBound):
		// Complete up to the bound asked for (stated, --delay-bound, or the
		// first of --delay-budget's): what the check was asked to do.
		return exitOK
	}
	return exitIncomplete
}

// writeJSON writes the --format json report.
func (p *checkPlan) writeJSON(stdout, stderr io.Writer, res *model.Result, tries []search.Stats, dir string) {
	out := toJSON(res, p.mode, p.walk.Seed, p.walk.Count)
	if _, boundedOK := res.CompleteUpToDelays(); boundedOK {
		out.Result, out.DelayOrigin = "complete-up-to-delays", p.delayOrigin
	}
	for _, st := range tries {
		out.DelayTries = append(out.DelayTries, delayTryJSON{K: st.DelayBound, Result: resultName(st.Outcome), Reason: st.Reason,
			DistinctStates: st.Distinct, Depth: st.Depth, Seconds: st.Seconds})
	}
	out.Artifacts = dir
	out.Config.Memory = p.memBytes
	out.Config.MemoryDefault = p.memDefault
	if p.mode == "swarm" {
		out.Config.Time = p.swarmTime.String()
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "cdcspec check: %v\n", err)
	}
}

// checkModelFlags are check's flags that shape the model configuration.
type checkModelFlags struct {
	config                                                       *string
	nodes, tables, ddl, tsMax, crashes, faults, restarts, drops  *int
	dups, sinkErrs, stalls, fastFails, clientOps, coordFailovers *int
	maintMoves, maxMoves                                         *int
	moves, puller                                                *bool
	bugs, without, mutate                                        stringList
}

// build builds the configuration the flags name (set: the flags given),
// each flag checked against its own range; ok is false with the exit code
// after a usage error.
func (f *checkModelFlags) build(fs *cmdFlags, set map[string]bool, stderr io.Writer) (cfg model.Config, code int, ok bool) {
	// Without --config, a bug is checked in the configuration that exposes
	// it (cdcspec bugs lists them); several bugs use the first bug's.
	if !set["config"] && len(f.bugs) > 0 {
		if name := model.BugConfig(f.bugs[0]); name != "" {
			*f.config = name
		}
	}
	cfg, ok = model.Standard(*f.config)
	if !ok {
		fmt.Fprintf(stderr, "cdcspec check: unknown --config %q (have %s)\n", *f.config, strings.Join(model.StandardNames(), ", "))
		return model.Config{}, exitUsage, false
	}
	if set["fault-budget"] {
		if err := intIn("--fault-budget", *f.faults, 0, model.MaxFaultBudget); err != nil {
			return model.Config{}, fs.usageError("%v", err), false
		}
		cfg.Crashes, cfg.SinkErrors = *f.faults, *f.faults
	}
	// Each bound is checked against its own range here, so the error
	// names the flag (cfg.Validate names the configuration's fields).
	const fb = model.MaxFaultBudget
	ints := []struct {
		name   string
		dst    *int
		v      int
		lo, hi int
	}{
		{"nodes", &cfg.Nodes, *f.nodes, 2, model.MaxNodes}, {"tables", &cfg.Tables, *f.tables, 0, model.MaxTables},
		{"ddl-tables", &cfg.DDLTables, *f.ddl, 0, model.MaxTables},
		{"crashes", &cfg.Crashes, *f.crashes, 0, fb}, {"restarts", &cfg.Restarts, *f.restarts, 0, fb}, {"drops", &cfg.Drops, *f.drops, 0, fb},
		{"dups", &cfg.Dups, *f.dups, 0, fb}, {"sink-errors", &cfg.SinkErrors, *f.sinkErrs, 0, fb}, {"stalls", &cfg.Stalls, *f.stalls, 0, fb},
		{"fast-fails", &cfg.FastFails, *f.fastFails, 0, fb}, {"client-ops", &cfg.ClientOps, *f.clientOps, 0, fb},
		{"coord-failovers", &cfg.CoordFailovers, *f.coordFailovers, 0, fb},
		{"maint-moves", &cfg.MaintMoves, *f.maintMoves, 0, fb}, {"max-moves", &cfg.MaxMoves, *f.maxMoves, 0, fb},
	}
	for _, in := range ints {
		if set[in.name] {
			if err := intIn("--"+in.name, in.v, in.lo, in.hi); err != nil {
				return model.Config{}, fs.usageError("%v", err), false
			}
			*in.dst = in.v
		}
	}
	if set["ts"] {
		if err := intIn("--ts", *f.tsMax, model.MinTs, model.MaxTs); err != nil {
			return model.Config{}, fs.usageError("%v", err), false
		}
		cfg.TsMax = uint8(*f.tsMax)
	}
	if set["moves"] {
		cfg.SpanMoves = *f.moves
	}
	if set["puller"] {
		cfg.Puller = *f.puller
	}
	for _, b := range f.bugs {
		e, _ := spec.LookupBug(b) // known: checked above
		if e.ModelGap != "" {
			return model.Config{}, fs.usageError("--bug %s: the model cannot express it yet: %s; 'cdcspec sim --bug %s' runs it on the implementation", b, e.ModelGap, b), false
		}
		cfg.Bugs = cfg.Bugs.With(e.ID)
	}
	for _, w := range f.without {
		ft, ok := model.ParseFeature(w)
		if !ok {
			fmt.Fprintf(stderr, "cdcspec check: unknown --without feature %q (have %s)\n", w, strings.Join(model.FeatureNames(), ", "))
			return model.Config{}, exitUsage, false
		}
		cfg.Features &^= ft
	}
	for _, m := range f.mutate {
		g, err := model.ParseMutation(m)
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec check: --mutate: %v\n", err)
			return model.Config{}, exitUsage, false
		}
		cfg.Mutations = cfg.Mutations.With(g)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "cdcspec check: %v\n", err)
		return model.Config{}, exitUsage, false
	}
	return cfg, 0, true
}

// checkReport is what printCheck prints: a check's result and how it ran.
type checkReport struct {
	cfg          *model.Config
	res          *model.Result
	mode         string         // exhaustive | simulate | swarm
	tries        []search.Stats // the delay-bounded searches of --delay-budget
	memBytes     int64          // the memory budget; searchMemory is the search's half
	memDefault   bool
	searchMemory int64
	dir          string // the counterexample's artifacts, "" if none
	delayOrigin  string // where the delay bound came from (stated, a flag)
}

// printCheck prints a check's text report: configuration, result,
// statistics, each property's status and the counterexample.
func printCheck(stdout io.Writer, r checkReport) {
	cfg, res, mode, tries, memBytes, memDefault, dir := r.cfg, r.res, r.mode, r.tries, r.memBytes, r.memDefault, r.dir
	delayOrigin := r.delayOrigin
	upTo, boundedOK := res.CompleteUpToDelays()
	fmt.Fprintf(stdout, "config %s %s\n", cfg.String(), res.Bounds.String())
	fmt.Fprintf(stdout, "mode %s\n", mode)
	total := 0.0
	for _, st := range tries {
		total += st.Seconds
		if _, ok := st.CompleteUpToDelays(); ok {
			fmt.Fprintf(stdout, "delay bound %d: complete", st.DelayBound)
		} else {
			fmt.Fprintf(stdout, "delay bound %d: %s", st.DelayBound, resultName(st.Outcome))
			if st.Reason != "" {
				fmt.Fprintf(stdout, " (%s)", st.Reason)
			}
		}
		fmt.Fprintf(stdout, ", %d states, depth %d, %.2f s\n", st.Distinct, st.Depth, st.Seconds)
	}
	if len(tries) > 0 {
		fmt.Fprintf(stdout, "delay searches: %d in %.2f s; the result is the largest bound that completed\n", len(tries), total)
	}
	if boundedOK {
		// Never a bare "complete": the bound and where it comes from.
		fmt.Fprintf(stdout, "result complete up to %d delays (%s)\n", upTo, delayOrigin)
	} else {
		fmt.Fprintf(stdout, "result %s", resultName(res.Outcome))
		if res.Reason != "" {
			fmt.Fprintf(stdout, " (%s)", res.Reason)
		}
		if res.Outcome == search.OK && res.DelayBounded {
			fmt.Fprintf(stdout, " (the delay bound %d cut nothing: every schedule explored; %s)", res.DelayBound, delayOrigin)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "distinct states %d, transitions %d, depth %d, %.2f s, %.0f states/s\n",
		res.Distinct, res.Transitions, res.Depth, res.Seconds, res.StatesPerSecond())
	if res.Symmetry > 1 {
		fmt.Fprintf(stdout, "symmetry: %d interchangeable node orders; the distinct states are orbits (--symmetry=false counts every state)\n", res.Symmetry)
	}
	if mode != "simulate" {
		fmt.Fprintf(stdout, "fingerprints: 64-bit, probability of a collision %.1e\n", res.Collision)
	}
	if res.DelayBounded {
		fmt.Fprintf(stdout, "reduction: %s: %d transitions past the bound not taken, %d states expanded again with fewer delays\n",
			res.Reduction, res.DelayPruned, res.Reexpanded)
	}
	if memBytes > 0 {
		fmt.Fprintf(stdout, "memory: budget %d MB%s, search tables and frontier peaked at %d MB (of the search's half, %d MB), %d MB spilled to disk\n",
			memBytes>>20, memoryOrigin(memDefault), res.PeakMemory>>20, r.searchMemory>>20, res.Spilled>>20)
	}
	if c := res.Coverage; c != nil {
		printCoverage(stdout, c)
	}
	for _, p := range propStatuses(res) {
		fmt.Fprintf(stdout, "  %-32s %s\n", p.Name, p.Status)
	}
	if res.Violation != nil {
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, res.Violation.Story())
		if dir != "" {
			fmt.Fprintf(stdout, "\ncounterexample written to %s\n", dir)
		}
	}
}

// checkMatrix checks the flags of `check --matrix` and runs the matrix.
func checkMatrix(set map[string]bool, o matrixOpts, memory string, args []string, stdout, stderr io.Writer) int {
	for _, f := range matrixExcludes {
		if set[f] {
			fmt.Fprintf(stderr, "cdcspec check: --matrix runs the matrix's own configurations; --%s does not apply (--matrix-rows picks rows)\n", f)
			return exitUsage
		}
	}
	if o.rowTime <= 0 {
		fmt.Fprintf(stderr, "cdcspec check: --row-time must be > 0, got %s\n", o.rowTime)
		return exitUsage
	}
	o.memory = defaultMatrixMemory
	if set["memory"] {
		var err error
		if o.memory, err = parseBytes(memory); err != nil {
			fmt.Fprintf(stderr, "cdcspec check: --memory: %v\n", err)
			return exitUsage
		}
	}
	if err := o.bounds.Validate(); err != nil {
		fmt.Fprintf(stderr, "cdcspec check: %v\n", err)
		return exitUsage
	}
	rows, err := selectRows(o.rows)
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec check: %v\n", err)
		return exitUsage
	}
	if o.list {
		return listMatrix(rows, o.format, stdout, stderr)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	return runMatrix(ctx, rows, o, args, stdout, stderr)
}

// resultName is the outcome as the output names it: "ok", "violation" or
// "incomplete" (a bound cut the search, or random walks found nothing).
func resultName(o search.Outcome) string {
	switch o {
	case search.OK, search.Violation:
		return o.String()
	}
	return "incomplete"
}

func propStatuses(res *model.Result) []propJSON {
	var out []propJSON
	for _, p := range spec.Properties() {
		st := "holds"
		switch {
		case p.Class == spec.Liveness && !res.Bounds.Liveness():
			st = "not checked"
		case res.Violation != nil && res.Violation.Property == p.Name:
			st = "violated"
		case res.Outcome == search.Violation:
			st = "not violated before the search stopped"
		case res.Outcome != search.OK:
			st = "holds within the explored bounds"
		}
		out = append(out, propJSON{Name: string(p.Name), Status: st})
	}
	return out
}

// printCoverage is the swarm's coverage report.
func printCoverage(w io.Writer, c *search.Coverage) {
	fmt.Fprintf(w, "coverage: %d random walks, %d bounded searches\n", c.Walks, c.Searches)
	fmt.Fprintf(w, "  new states by depth:")
	for lo := 0; lo < len(c.Depths); lo += 10 {
		var n int64
		for d := lo; d < lo+10 && d < len(c.Depths); d++ {
			n += c.Depths[d]
		}
		fmt.Fprintf(w, " %d-%d:%d", lo, lo+9, n)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  transitions by action:")
	for _, a := range c.ActionNames() {
		fmt.Fprintf(w, " %s=%d", a, c.Actions[a])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  safety properties (%d) judged on %d transitions\n", len(c.Safety), c.SafetyJudged)
	if len(c.Liveness) > 0 {
		fmt.Fprintf(w, "  liveness properties (%d) judged by %d fair schedules:", len(c.Liveness), sumVerdicts(c))
		for _, v := range []search.Verdict{search.Holds, search.Unsettled, search.GoalMissed, search.SafetyBroken} {
			fmt.Fprintf(w, " %s=%d", v, c.FairRuns[v])
		}
		fmt.Fprintln(w)
	}
}

func sumVerdicts(c *search.Coverage) int64 {
	var n int64
	for _, v := range c.FairRuns {
		n += v
	}
	return n
}

// progressWriter returns the progress callback for stderr (the process's
// memory shown against the budget, budget bytes): a line that
// rewrites itself on a terminal, a plain line every 10 s on a file or
// pipe, nothing for any other writer (tests). clear ends the terminal line.
func progressWriter(stderr io.Writer, budget int64) (progress func(search.Progress), clear func()) {
	f, ok := stderr.(*os.File)
	if !ok {
		return nil, func() {}
	}
	line := func(p search.Progress) string {
		s := fmt.Sprintf("%d states, %.0f states/s, queue %d, depth %d, memory %d MB of the %d MB budget, %s elapsed",
			p.Distinct, p.StatesPerSec, p.Queue, p.Depth, p.Memory>>20, budget>>20, p.Elapsed.Round(time.Second))
		if p.ETA > 0 {
			s += fmt.Sprintf(", ETA %s", p.ETA.Round(time.Second))
		}
		return s
	}
	if term.IsTerminal(int(f.Fd())) {
		shown := false
		return func(p search.Progress) {
				if p.Elapsed >= 2*time.Second {
					fmt.Fprintf(f, "\r\033[K%s", line(p))
					shown = true
				}
			}, func() {
				if shown {
					fmt.Fprint(f, "\r\033[K")
				}
			}
	}
	return func(p search.Progress) {
		if s := int(p.Elapsed.Seconds()); s >= 10 && s%10 == 0 {
			fmt.Fprintf(f, "progress: %s\n", line(p))
		}
	}, func() {}
}

// parseBytes reads a size such as 2GB, 1.5G, 512MB, 4096 (bytes).
func parseBytes(v string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(v))
	mult := int64(1)
	for _, x := range []struct {
		suf string
		m   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, x.suf) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, x.suf)), x.m
			break
		}
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("want a positive size such as 2GB or 512MB, got %q", v)
	}
	n := int64(f * float64(mult))
	if min := int64(search.MinMemory) * 2; n < min {
		return 0, fmt.Errorf("%q is below the minimum of %d MB (half the budget is the search's, at least %d MB)", v, min>>20, search.MinMemory>>20)
	}
	return n, nil
}

func toJSON(res *model.Result, mode string, seed uint64, walks int) checkJSON {
	cfg, b := &res.Config, res.Bounds
	out := checkJSON{
		Result: resultName(res.Outcome), Reason: res.Reason,
		Config: configJSON{Config: *cfg, MaxDepth: b.MaxDepth, MaxStates: b.MaxStates, Liveness: b.Liveness(),
			Features: cfg.Features.String(), Mode: mode},
		Bugs:           cfg.Bugs.Names(),
		DistinctStates: res.Distinct, Transitions: res.Transitions, Depth: res.Depth,
		Seconds: res.Seconds, StatesPerSecond: res.StatesPerSecond(),
		SymmetryGroup: res.Symmetry, Collision: res.Collision, SpilledBytes: res.Spilled,
		Properties: propStatuses(res), Reduction: res.Reduction, DelayPruned: res.DelayPruned,
	}
	if out.Reduction == "" {
		out.Reduction = "none" // random walks and swarms reduce nothing
	}
	if b.DelayBounded {
		k := b.DelayBound
		out.Config.DelayBound = &k
	}
	if k, ok := res.CompleteUpToDelays(); ok {
		out.CompleteUpToDelays = &k
	}
	if c := res.Coverage; c != nil {
		cj := &coverageJSON{Walks: c.Walks, Searches: c.Searches, Depths: c.Depths, Actions: c.Actions,
			SafetyJudged: c.SafetyJudged, FairRuns: map[string]int64{}}
		for v, n := range c.FairRuns {
			cj.FairRuns[v.String()] = n
		}
		for _, p := range c.Safety {
			cj.Safety = append(cj.Safety, string(p))
		}
		for _, p := range c.Liveness {
			cj.Liveness = append(cj.Liveness, string(p))
		}
		out.Coverage = cj
	}
	if out.Bugs == nil {
		out.Bugs = []string{}
	}
	switch mode {
	case "simulate":
		out.Config.Seed, out.Config.Walks = seed, walks
	case "swarm":
		out.Config.Seed = seed
	}
	if v := res.Violation; v != nil {
		vj := &violationJSON{Property: string(v.Property), Message: v.Message}
		for _, st := range v.Steps {
			sj := stepJSON{Actor: st.Actor, Action: st.Action, Text: st.Text, Fair: st.Fair, Events: []string{}}
			for _, e := range st.Events {
				sj.Events = append(sj.Events, e.String())
			}
			vj.Steps = append(vj.Steps, sj)
		}
		out.Violation = vj
	}
	return out
}

// writeArtifacts writes the counterexample as text and JSON, the actions for
// model.Replay, and the command that reproduces it.
func writeArtifacts(dir string, res *model.Result, args []string) (string, error) {
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "cdcspec-check-*")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return "", err
	}
	files := map[string][]byte{
		"counterexample.txt": []byte(res.Violation.Story()),
		"command.txt":        []byte("go run ./cmd/cdcspec check " + strings.Join(args, " ") + "\n"),
	}
	j, err := json.MarshalIndent(toJSON(res, "exhaustive", 0, 0), "", "  ")
	if err != nil {
		return "", err
	}
	files["counterexample.json"] = j
	if cex, err := report.ParseCounterexample(j); err == nil {
		var page bytes.Buffer
		if err := report.CounterexampleHTML(&page, cex, "cdcspec check "+strings.Join(args, " ")); err != nil {
			return "", err
		}
		files["counterexample.html"] = page.Bytes()
	}
	acts, err := json.MarshalIndent(res.Violation.Actions(), "", "  ")
	if err != nil {
		return "", err
	}
	files["actions.json"] = acts
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// maxDefaultMemory caps the default memory budget of check.
const maxDefaultMemory = 8 << 30

// defaultMemoryBudget is check's budget without --memory: half of the
// machine's memory (MemTotal in /proc/meminfo, or the container's cgroup
// limit when lower), at most maxDefaultMemory; where neither can be read,
// 2 GB. A model search on a shared machine is then bounded whether or not
// the user thought of it.
func defaultMemoryBudget() int64 {
	total := memTotal()
	if l := cgroupMemoryLimit(); l > 0 && (total <= 0 || l < total) {
		total = l
	}
	if total <= 0 {
		return 2 << 30
	}
	return max(min(total/2, maxDefaultMemory), 2*search.MinMemory)
}

// cgroupMemoryLimit is the memory limit of the cgroup the process sees at
// the usual mount points (v2 memory.max, v1 memory.limit_in_bytes), 0 if
// none is set or readable ("max", or v1's page-rounded MaxInt64).
func cgroupMemoryLimit() int64 {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && v > 0 && v < 1<<60 {
			return v
		}
	}
	return 0
}

// memTotal reads MemTotal from /proc/meminfo, in bytes (0 if unknown).
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 2 && fields[1] == "kB" {
				if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// memoryOrigin says where the budget came from and how to change it.
func memoryOrigin(isDefault bool) string {
	if isDefault {
		return fmt.Sprintf(" (the default: half of the machine's or container's memory, at most %d GB; --memory raises it)", maxDefaultMemory>>30)
	}
	return " (--memory)"
}

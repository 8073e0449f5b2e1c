package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"cdcspec/model"
	"cdcspec/search"
)

// checkLine is one configuration's verdict, as the checker prints it.
type checkLine struct {
	Config      string  `json:"config"`
	Outcome     string  `json:"outcome"` // ok, violation, bound, inconclusive
	Property    string  `json:"property,omitempty"`
	Distinct    int64   `json:"distinct"`
	Transitions int64   `json:"transitions"`
	Depth       int     `json:"depth"`
	Seconds     float64 `json:"seconds"`
}

// readyLine is printed once the checker has started (its package
// initialisation, the mutant schema's included, did not panic).
const readyLine = `{"ready":true}`

// lookupConfig resolves a row name: the row source of the runner, a
// standard configuration (model.Standard) or a row of the configuration
// matrix (model.Matrix; every standard configuration is one of its rows).
func lookupConfig(name string) (model.Config, error) {
	if cfg, ok := model.Standard(name); ok {
		return cfg, nil
	}
	for _, r := range model.Matrix() {
		if r.Name == name {
			return r.Config, nil
		}
	}
	return model.Config{}, fmt.Errorf("unknown configuration %q: not a standard configuration (%s) nor a matrix row (cdcspec check --matrix --list)",
		name, strings.Join(model.StandardNames(), ", "))
}

// defaultConfigs: every standard configuration, "default" first.
func defaultConfigs() []string { return model.StandardNames() }

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configs := fs.String("configs", strings.Join(defaultConfigs(), ","), "configurations to check, in order (comma-separated)")
	maxStates := fs.Int("max-states", 20000, "state budget per exhaustive configuration")
	walks := fs.Int("walks", 200, "random walks per configuration that names walks (Config.Walks; seed 1)")
	perConfig := fs.Duration("time-per-config", 0, "stop each configuration's search after this long (0: no limit)")
	liveness := fs.Bool("liveness", true, "check the liveness properties too")
	all := fs.Bool("all", false, "check every configuration (default: stop at the first violation)")
	row := fs.String("row", "", "switch one row of `make mutate`'s table (model.Mutations: a guard off, a feature off or a catalogue entry on) in every configuration")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mutate-model check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *maxStates <= 0 || *walks <= 0 || *perConfig < 0 {
		fmt.Fprintln(stderr, "mutate-model check: --max-states and --walks must be > 0, --time-per-config >= 0")
		return exitUsage
	}
	var cfgs []model.Config
	for _, n := range splitList(*configs) {
		cfg, err := lookupConfig(n)
		if err != nil {
			fmt.Fprintf(stderr, "mutate-model check: --configs: %v\n", err)
			return exitUsage
		}
		cfgs = append(cfgs, cfg)
	}
	if *row != "" {
		mi, ok := mutationRow(*row)
		if !ok {
			fmt.Fprintf(stderr, "mutate-model check: --row: no row %q in model.Mutations\n", *row)
			return exitUsage
		}
		for i := range cfgs {
			mi.Apply(&cfgs[i])
		}
	}
	fmt.Fprintln(stdout, readyLine)
	enc := json.NewEncoder(stdout)
	for _, cfg := range cfgs {
		line, err := checkOne(cfg, *maxStates, *walks, *perConfig, *liveness)
		if err != nil {
			fmt.Fprintf(stderr, "mutate-model check: %s: %v\n", cfg.Name, err)
			return exitUsage
		}
		if err := enc.Encode(line); err != nil {
			fmt.Fprintf(stderr, "mutate-model check: %v\n", err)
			return exitFail
		}
		if line.Outcome == "violation" && !*all {
			return exitFail
		}
	}
	return exitOK
}

// checkOne checks cfg with one worker (the runner's parallelism is across
// mutants): exhaustively within maxStates, or by walks seeded random walks
// when the configuration names walks.
func checkOne(cfg model.Config, maxStates, walks int, limit time.Duration, liveness bool) (checkLine, error) {
	b := search.Bounds{Workers: 1, MaxStates: maxStates, SafetyOnly: !liveness}
	if limit > 0 {
		stop := make(chan struct{})
		t := time.AfterFunc(limit, func() { close(stop) })
		defer t.Stop()
		b.Stop = stop
	}
	var r model.Result
	var err error
	if cfg.Walks > 0 {
		b.MaxStates = 0
		r, err = model.Simulate(cfg, b, search.Walks{Seed: 1, Count: walks, Depth: cfg.WalkDepth})
	} else {
		r, err = model.Check(cfg, b, nil)
	}
	if err != nil {
		return checkLine{}, err
	}
	l := checkLine{Config: cfg.Name, Distinct: r.Distinct, Transitions: r.Transitions, Depth: r.Depth, Seconds: r.Seconds}
	switch r.Outcome {
	case search.OK:
		l.Outcome = "ok"
	case search.Violation:
		l.Outcome = "violation"
		l.Property = string(r.Violation.Property)
	case search.BoundReached:
		l.Outcome = "bound"
	default:
		l.Outcome = "inconclusive"
	}
	return l, nil
}

func mutationRow(name string) (model.MutationInfo, bool) {
	for _, mi := range model.Mutations() {
		if mi.Name == name {
			return mi, true
		}
	}
	return model.MutationInfo{}, false
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

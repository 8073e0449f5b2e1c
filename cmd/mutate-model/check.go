package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"cdcspec/model"
	"cdcspec/search"
)

// checkLine is one killer's verdict, as the checker prints it.
type checkLine struct {
	Killer      string  `json:"killer"` // ROW@MODE (killer.String)
	Config      string  `json:"config"`
	Outcome     string  `json:"outcome"` // ok (complete), violation, bound, delays (complete up to the delay bound), inconclusive (walks)
	Property    string  `json:"property,omitempty"`
	Distinct    int64   `json:"distinct"`
	Transitions int64   `json:"transitions"`
	Depth       int     `json:"depth"`
	Seconds     float64 `json:"seconds"`
	// Infected: the active mutant changed a value in this run (mutant.On);
	// false with no mutant on.
	Infected bool `json:"infected,omitempty"`
	// States, StatesHash: the exhaustive modes' model.StateSet (the hash
	// in hex); empty for walks.
	States     int64  `json:"states,omitempty"`
	StatesHash string `json:"states_hash,omitempty"`
	// Detail: the refinement killer's divergence (run, step, View field).
	Detail string `json:"detail,omitempty"`
}

// readyLine is printed once the checker has started (its package
// initialisation, the mutant schema's included, did not panic).
const readyLine = `{"ready":true}`

// lookupConfig resolves a row name: the row source of the runner, a
// standard configuration (model.Standard) or a row of the configuration
// matrix (model.Matrix; every standard configuration is one of its rows).
func lookupConfig(name string) (model.Config, error) {
	if name == refineKiller {
		return model.Config{}, fmt.Errorf("refine is the refinement killer: refine@N, N seeded runs")
	}
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

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configs := fs.String("configs", strings.Join(model.StandardNames(), ","), "configurations to check, in order (comma-separated), each in its own mode (--killers' bare ROW)")
	killers := fs.String("killers", "", "searches to run, in order: ROW@MODE, MODE dK (delay bound K), sN (N states), wN (N walks) or all (complete), or refine@N (N seeded runs of impl/sim followed by the model); overrides --configs")
	maxStates := fs.Int("max-states", 20000, "state budget of a bare configuration's exhaustive search")
	walks := fs.Int("walks", 200, "random walks of a bare configuration that names walks (Config.Walks; seed 1)")
	perConfig := fs.Duration("time-per-config", 0, "stop each search after this long (0: no limit)")
	memory := fs.Int64("memory", 1<<30, "memory budget of each search in bytes (search.Bounds.Memory)")
	liveness := fs.Bool("liveness", true, "check the liveness properties too")
	all := fs.Bool("all", false, "run every search (default: stop at the first violation)")
	row := fs.String("row", "", "switch one row of `make mutate`'s table (model.Mutations: a guard off, a feature off or a catalogue entry on) in every configuration")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mutate-model check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *maxStates <= 0 || *walks <= 0 || *perConfig < 0 || *memory < search.MinMemory {
		fmt.Fprintf(stderr, "mutate-model check: --max-states and --walks must be > 0, --time-per-config >= 0, --memory >= %d\n", search.MinMemory)
		return exitUsage
	}
	list, flagName := *configs, "--configs"
	if *killers != "" {
		list, flagName = *killers, "--killers"
	}
	ks, err := parseKillers(list, *maxStates, *walks)
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model check: %s: %v\n", flagName, err)
		return exitUsage
	}
	if *row != "" {
		mi, ok := mutationRow(*row)
		if !ok {
			fmt.Fprintf(stderr, "mutate-model check: --row: no row %q in model.Mutations\n", *row)
			return exitUsage
		}
		for i := range ks {
			if ks[i].refinement() {
				fmt.Fprintf(stderr, "mutate-model check: --row: %s follows the implementation with the model's own configurations; a row cannot be switched in it\n", ks[i])
				return exitUsage
			}
			mi.Apply(&ks[i].cfg)
		}
	}
	fmt.Fprintln(stdout, readyLine)
	enc := json.NewEncoder(stdout)
	for _, k := range ks {
		line, err := runKiller(k, *perConfig, *liveness, *memory)
		if err != nil {
			fmt.Fprintf(stderr, "mutate-model check: %s: %v\n", k, err)
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

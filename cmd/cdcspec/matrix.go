package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"cdcspec/model"
	"cdcspec/search"
)

// matrixOpts are the flags of `cdcspec check --matrix`.
type matrixOpts struct {
	rows      string        // --matrix-rows: a regexp the row names must match ("": every row)
	rowTime   time.Duration // --row-time: each row's wall-clock budget
	memory    int64         // --memory in bytes (every row gets the whole budget)
	bounds    search.Bounds // workers, states, depth, liveness, symmetry, spill dir
	format    string
	artifacts string // --artifacts: a row's counterexample goes to DIR/ROW ("": a new temporary directory per row)
	list      bool   // --list: print the rows and the pairwise coverage, run nothing
	// deepen (--row-deepen): after a row completes up to its stated delay
	// bound k, search k+1, k+2, ... until --row-time, and report the
	// largest k that completed.
	deepen bool
	// delayBound (--delay-bound) replaces every row's stated bound (0:
	// every row unbounded); nil: each row's own.
	delayBound *int
	// check searches one row; nil: model.Check (tests stand in for it).
	check func(model.Config, search.Bounds, func(search.Progress)) (model.Result, error)
}

// The flags of check that shape one configuration or choose another mode;
// --matrix refuses them, since every row brings its own configuration.
var matrixExcludes = []string{"config", "nodes", "tables", "ddl-tables", "ts", "crashes", "faults", "restarts",
	"drops", "dups", "sink-errors", "stalls", "fast-fails", "client-ops", "coord-failovers", "maint-moves", "moves",
	"max-moves", "puller", "bug", "without", "mutate", "simulate", "time", "seed", "walks", "walk-depth", "replay-impl",
	"delay-budget"}

// defaultMatrixMemory is --memory under --matrix when it is not given: the
// budget every matrix row must complete within (issue 25).
const defaultMatrixMemory = 3 << 30

// matrixRowJSON is one row of the matrix in --format json.
type matrixRowJSON struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	Config string `json:"config"`
	// StatedDelayBound is the row's stated delay bound (Config.DelayBound,
	// or --delay-bound): 0, the row is searched unbounded.
	StatedDelayBound int `json:"stated_delay_bound"`
	// Complete: every schedule explored (Exhaustive), or every schedule
	// within the stated delay bound, without a violation.
	Complete   bool `json:"complete"`
	Exhaustive bool `json:"exhaustive"`
	// CompleteUpToDelays is the largest delay bound k that completed
	// (>= the stated bound; larger with --row-deepen), nil when the row
	// was exhaustive or did not complete.
	CompleteUpToDelays *int `json:"complete_up_to_delays,omitempty"`
	// Why says why a row is not complete: budget (--row-time), memory,
	// states (--max-states), depth (--max-depth or the network bound),
	// interrupted, not-run (the matrix was interrupted before it), or
	// error (the row's settings were refused).
	Why             string  `json:"why,omitempty"`
	Detail          string  `json:"detail,omitempty"` // the search's own reason
	Verdict         string  `json:"verdict"`          // ok, violation, no violation found
	Property        string  `json:"property,omitempty"`
	DistinctStates  int64   `json:"distinct_states"`
	Transitions     int64   `json:"transitions"`
	Depth           int     `json:"depth"`
	Seconds         float64 `json:"seconds"`
	StatesPerSecond float64 `json:"states_per_second"`
	PeakMemory      int64   `json:"peak_memory_bytes"`
	Spilled         int64   `json:"spilled_bytes,omitempty"`
	Artifacts       string  `json:"artifacts,omitempty"`
	// StatedSeconds: with --row-deepen, the time of the search at the
	// stated bound (the other figures are the largest k's).
	StatedSeconds float64 `json:"stated_seconds,omitempty"`
	// DelayTries: with --row-deepen, every search of the deepening.
	DelayTries []delayTryJSON `json:"delay_tries,omitempty"`
}

// matrixJSON is `check --matrix --format json`.
type matrixJSON struct {
	Result       string          `json:"result"` // ok, violation, incomplete
	RowTime      string          `json:"row_time"`
	Memory       int64           `json:"memory_bytes"`
	Liveness     bool            `json:"liveness"`
	Rows         []matrixRowJSON `json:"rows"`
	Complete     int             `json:"complete"`
	Exhaustive   int             `json:"exhaustive"` // of the complete rows, those that explored every schedule
	Violations   int             `json:"violations"`
	TotalSeconds float64         `json:"total_seconds"`
}

// selectRows returns the rows whose names match pattern ("" matches all).
func selectRows(pattern string) ([]model.MatrixRow, error) {
	rows := model.Matrix()
	if pattern == "" {
		return rows, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("--matrix-rows: %v", err)
	}
	var out []model.MatrixRow
	for _, r := range rows {
		if re.MatchString(r.Name) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--matrix-rows %q matches no row of the matrix", pattern)
	}
	return out, nil
}

// runMatrix runs the rows one after the other, each with the whole memory
// budget and its own time budget, and prints a row per configuration as it
// finishes, then the total. Exit 1 if a row found a violation, else 3 if
// a row did not complete, else 0.
func runMatrix(ctx context.Context, rows []model.MatrixRow, o matrixOpts, args []string, stdout, stderr io.Writer) int {
	bounds := make([]search.Bounds, len(rows))
	for i, r := range rows {
		b := r.Config.StatedBounds(o.bounds)
		if o.delayBound != nil {
			b.DelayBounded, b.DelayBound = *o.delayBound > 0, *o.delayBound
		}
		err := r.Config.Validate()
		if err == nil {
			err = b.Validate()
		}
		if err != nil {
			fmt.Fprintf(stderr, "cdcspec check: matrix row %q: %v\n", r.Name, err)
			return exitUsage
		}
		b.Memory = o.memory / 2 // as in check --memory: half is the search's own
		bounds[i] = b
	}
	debug.SetMemoryLimit(o.memory / 20 * 17)
	defer debug.SetMemoryLimit(-1)

	start := time.Now()
	out := matrixJSON{RowTime: o.rowTime.String(), Memory: o.memory, Liveness: o.bounds.Liveness()}
	text := o.format == "text"
	if text {
		fmt.Fprintf(stdout, "matrix: %d rows, each within %s and %d MB, liveness %v\n", len(rows), o.rowTime, o.memory>>20, o.bounds.Liveness())
		fmt.Fprintf(stdout, "%-30s %-10s %-5s %-11s %12s %5s %9s %10s  %s\n", "row", "result", "k", "why", "states", "depth", "seconds", "states/s", "verdict")
	}
	for i, r := range rows {
		var j matrixRowJSON
		if ctx.Err() != nil {
			j = matrixRowJSON{Name: r.Name, Reason: r.Reason, Config: r.Config.String(), StatedDelayBound: statedK(bounds[i]),
				Why: "not-run", Verdict: "no violation found"}
		} else {
			fmt.Fprintf(stderr, "matrix: row %d/%d %s: %s\n", i+1, len(rows), r.Name, r.Reason)
			j = runMatrixRow(ctx, r, bounds[i], o, args, stderr)
			fmt.Fprintf(stderr, "matrix: row %s: %s in %.1f s\n", r.Name, rowResult(&j), j.Seconds)
			debug.FreeOSMemory() // the next row starts from an empty heap
		}
		out.Rows = append(out.Rows, j)
		if j.Complete {
			out.Complete++
		}
		if j.Exhaustive {
			out.Exhaustive++
		}
		if j.Verdict == "violation" {
			out.Violations++
		}
		if text {
			printMatrixRow(stdout, &j)
		}
	}
	out.TotalSeconds = time.Since(start).Seconds()
	code := exitOK
	out.Result = "ok"
	switch {
	case out.Violations > 0:
		code, out.Result = exitViolation, "violation"
	case out.Complete < len(out.Rows):
		code, out.Result = exitIncomplete, "incomplete"
	}
	if !text {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "cdcspec check: %v\n", err)
		}
		return code
	}
	fmt.Fprintf(stdout, "total: %d rows, %d complete (%d exhaustive, %d up to their stated delay bound), %d with a violation, %.1f s\n",
		len(out.Rows), out.Complete, out.Exhaustive, out.Complete-out.Exhaustive, out.Violations, out.TotalSeconds)
	for _, j := range out.Rows {
		if j.Artifacts != "" {
			fmt.Fprintf(stdout, "counterexample of %s (%s) written to %s\n", j.Name, j.Property, j.Artifacts)
		}
	}
	return code
}

// runMatrixRow checks one row within o.rowTime: a timer closes the
// search's Stop, as an interrupt does.
func runMatrixRow(ctx context.Context, r model.MatrixRow, b search.Bounds, o matrixOpts, args []string, stderr io.Writer) matrixRowJSON {
	j := matrixRowJSON{Name: r.Name, Reason: r.Reason, Config: r.Config.String(), StatedDelayBound: statedK(b)}
	stop := make(chan struct{})
	timer := time.NewTimer(o.rowTime)
	defer timer.Stop()
	budget := make(chan bool, 1) // true: the row's budget ended it
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-timer.C:
			budget <- true
			close(stop)
		case <-ctx.Done():
			close(stop)
		case <-done:
		}
	}()
	b.Stop = stop
	progress, clear := progressWriter(stderr, b.Memory*2)
	check := o.check
	if check == nil {
		check = model.Check
	}
	var res model.Result
	var tries []search.Stats
	var err error
	if o.deepen && b.DelayBounded {
		// The stated bound first, then deeper until the row's budget
		// (b.Stop) ends the last search.
		res, tries, err = model.CheckDelays(r.Config, b, o.rowTime+time.Minute, progress)
	} else {
		res, err = check(r.Config, b, progress)
	}
	clear()
	if err != nil {
		j.Why, j.Detail, j.Verdict = "error", err.Error(), "no violation found"
		return j
	}
	j.DistinctStates, j.Transitions, j.Depth = res.Distinct, res.Transitions, res.Depth
	j.Seconds, j.StatesPerSecond = res.Seconds, res.StatesPerSecond()
	j.PeakMemory, j.Spilled = res.PeakMemory, res.Spilled
	for _, st := range tries {
		j.DelayTries = append(j.DelayTries, delayTryJSON{K: st.DelayBound, Result: resultName(st.Outcome), Reason: st.Reason,
			DistinctStates: st.Distinct, Depth: st.Depth, Seconds: st.Seconds})
		if st.DelayBound == b.DelayBound {
			j.StatedSeconds = st.Seconds
		}
	}
	k, upTo := res.CompleteUpToDelays()
	switch {
	case res.Outcome == search.OK:
		j.Complete, j.Exhaustive, j.Verdict = true, true, "ok"
	case upTo && k >= b.DelayBound:
		j.Complete, j.CompleteUpToDelays, j.Verdict = true, &k, "ok"
	}
	switch res.Outcome {
	case search.OK:
	case search.Violation:
		j.Verdict, j.Property = "violation", string(res.Violation.Property)
		dir := ""
		if o.artifacts != "" {
			dir = filepath.Join(o.artifacts, r.Name)
		}
		rowArgs := append(append([]string{}, args...), "--matrix-rows", "^"+regexp.QuoteMeta(r.Name)+"$")
		if d, err := writeArtifacts(dir, &res, rowArgs); err != nil {
			fmt.Fprintf(stderr, "cdcspec check: row %s: writing the counterexample: %v\n", r.Name, err)
		} else {
			j.Artifacts = d
		}
	default:
		if j.Complete {
			break
		}
		j.Verdict, j.Detail = "no violation found", res.Reason
		select {
		case <-budget:
			j.Why = "budget"
		default:
			j.Why = whyIncomplete(res.Reason, ctx.Err() != nil)
		}
	}
	return j
}

// whyIncomplete names the bound that cut a search, from its reason.
func whyIncomplete(reason string, interrupted bool) string {
	switch {
	case interrupted:
		return "interrupted"
	case strings.Contains(reason, "memory budget"):
		return "memory"
	case strings.Contains(reason, "state bound"):
		return "states"
	case strings.Contains(reason, "depth or network size"):
		return "depth"
	}
	return "stopped"
}

func rowResult(j *matrixRowJSON) string {
	switch {
	case j.Verdict == "violation":
		return "violation of " + j.Property
	case j.Complete:
		return "complete"
	}
	return "incomplete (" + j.Why + ")"
}

// statedK is the delay bound a row runs with: 0 when unbounded.
func statedK(b search.Bounds) int {
	if !b.DelayBounded {
		return 0
	}
	return b.DelayBound
}

// rowK is the k column: "all" for an exhaustive row, the largest delay
// bound that completed, or "-".
func rowK(j *matrixRowJSON) string {
	switch {
	case j.Exhaustive:
		return "all"
	case j.CompleteUpToDelays != nil:
		return fmt.Sprint(*j.CompleteUpToDelays)
	}
	return "-"
}

func printMatrixRow(w io.Writer, j *matrixRowJSON) {
	result := "complete"
	switch {
	case j.Verdict == "violation":
		result = "violation"
	case !j.Complete:
		result = "incomplete"
	}
	verdict := j.Verdict
	if j.Property != "" {
		verdict += ": " + j.Property
	}
	switch {
	case j.StatedDelayBound == 0:
		verdict += " [unbounded]"
	case j.Exhaustive:
		verdict += fmt.Sprintf(" [stated bound %d cut nothing]", j.StatedDelayBound)
	default:
		verdict += fmt.Sprintf(" [stated bound %d]", j.StatedDelayBound)
	}
	why := j.Why
	if why == "" {
		why = "-"
	}
	fmt.Fprintf(w, "%-30s %-10s %-5s %-11s %12d %5d %9.1f %10.0f  %s\n", j.Name, result, rowK(j), why, j.DistinctStates, j.Depth, j.Seconds, j.StatesPerSecond, verdict)
}

// matrixListJSON is `check --matrix --list --format json`.
type matrixListJSON struct {
	Rows  []matrixListRow    `json:"rows"`
	Cells []model.MatrixCell `json:"cells"`
}

type matrixListRow struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	Config string `json:"config"`
	// StatedDelayBound: 0, the row completes unbounded.
	StatedDelayBound int `json:"stated_delay_bound"`
}

// listMatrix prints the selected rows, then every feature x fault pair with
// the rows (of the whole matrix) that cover it or why none can.
func listMatrix(rows []model.MatrixRow, format string, stdout, stderr io.Writer) int {
	out := matrixListJSON{Cells: model.MatrixCells()}
	for _, r := range rows {
		out.Rows = append(out.Rows, matrixListRow{Name: r.Name, Reason: r.Reason, Config: r.Config.String(), StatedDelayBound: r.Config.DelayBound})
	}
	if format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "cdcspec check: %v\n", err)
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "%d rows\n", len(out.Rows))
	for _, r := range out.Rows {
		fmt.Fprintf(stdout, "%-30s %s\n%-30s   %s\n", r.Name, r.Reason, "", r.Config)
		if r.StatedDelayBound > 0 {
			fmt.Fprintf(stdout, "%-30s   complete up to %d delays (stated bound)\n", "", r.StatedDelayBound)
		} else {
			fmt.Fprintf(stdout, "%-30s   complete unbounded\n", "")
		}
	}
	fmt.Fprintln(stdout, "\nfeature x fault pairs (rows of the whole matrix)")
	for _, c := range out.Cells {
		cover := strings.Join(c.Rows, ", ")
		if c.Impossible != "" {
			cover = c.Impossible
		}
		fmt.Fprintf(stdout, "%-22s %-20s %s\n", c.Feature, c.Fault, cover)
	}
	return exitOK
}

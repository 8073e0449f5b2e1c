package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"cdcspec/tools/mutate"
)

// Status classes of a mutant.
const (
	stKilled     = "killed"
	stSurvived   = "survived"
	stEquivalent = "equivalent"
	stBroken     = "broken"
	stTimeout    = "timeout"
)

// Routes of a kill: the searches' properties (route 1) or the per-step
// refinement against the implementation (route 2, refine@N).
const (
	routeSearch     = "search"
	routeRefinement = "refinement"
)

// result is one mutant's verdict.
type result struct {
	mutate.Mutant
	Index          int         `json:"index"` // in the package's whole list (the schema's switch)
	Status         string      `json:"status"`
	Config         string      `json:"config,omitempty"`           // the row that killed it
	Killer         string      `json:"killer,omitempty"`           // the search that killed it (ROW@MODE), or refine@N
	Route          string      `json:"route,omitempty"`            // of a killed one: "search" (a property of a search, or a panic in one) or "refinement" (refine@N)
	Property       string      `json:"property,omitempty"`         // the violated property, or "panic"
	Detail         string      `json:"detail,omitempty"`           // a panic's or a build error's first line; an equivalence's reason
	SameAsBaseline bool        `json:"same_as_baseline,omitempty"` // survived with the baseline's outcome and state set in every exhaustive search it infected (a hint, not a proof)
	Reached        bool        `json:"reached"`                    // some killer's run was infected: the mutant changed a value (mutant.Infected)
	Seconds        float64     `json:"seconds"`
	Checks         []checkLine `json:"checks,omitempty"`
}

// report is the JSON the runner writes.
type report struct {
	Package        string         `json:"package"`
	Mutants        int            `json:"mutants"` // in the package
	Shard          string         `json:"shard,omitempty"`
	Selected       int            `json:"selected"`
	Killers        []string       `json:"killers"`                   // in their first order; each mutant meets them by kills so far
	Complete       []string       `json:"complete,omitempty"`        // the complete searches a reached survivor meets (equivalence evidence)
	Dropped        []checkLine    `json:"dropped_killers,omitempty"` // violated without a mutant: they cannot kill
	MaxStates      int            `json:"max_states"`
	Walks          int            `json:"walks"`
	Baseline       []checkLine    `json:"baseline"`
	Killed         int            `json:"killed"`           // by either route: a search or the refinement killer
	KilledBySearch int            `json:"killed_by_search"` // route 1: a property of a search (or a panic in one)
	Survived       int            `json:"survived"`
	NotReached     int            `json:"not_reached"` // of the survivors: no killer's run was infected
	KillsBy        map[string]int `json:"kills_by"`    // killer -> mutants it killed
	Timeouts       int            `json:"timeouts"`
	Equivalent     int            `json:"equivalent"`
	Broken         int            `json:"broken"`
	Score          float64        `json:"score_percent"`        // killed (either route) / (selected - equivalent - broken)
	ScoreSearch    float64        `json:"score_search_percent"` // killed by a search / (selected - equivalent - broken)
	Seconds        float64        `json:"seconds"`
	Results        []result       `json:"results"`
}

type runFlags struct {
	pkg, killers, complete, shard, only, ops, jsonOut, equivalent string
	maxStates, walks, parallel, limit                             int
	timeout, perConfig                                            time.Duration
	liveness, copyMode, keep, verbose                             bool
}

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	fs.StringVar(&f.pkg, "pkg", "model", "package directory to mutate, relative to the module root")
	fs.StringVar(&f.killers, "killers", defaultKillers(), "searches each mutant must survive, in order until one kills it: ROW@MODE (ROW a standard configuration or matrix row; MODE dK delay bound K, sN N states, wN N walks, all complete; a bare ROW: its own mode); refine@N: N seeded runs of impl/sim followed step by step by the model (route 2, met after the searches and scored apart)")
	fs.StringVar(&f.complete, "complete", "", "complete searches (ROW@all) a survivor that changed some step meets: the same states as the original in each is equivalence evidence")
	fs.StringVar(&f.shard, "shard", "", "run shard i of n (i/n, 1-based): every n-th mutant in ID order")
	fs.StringVar(&f.only, "only", "", "run only these mutant IDs (comma-separated)")
	fs.StringVar(&f.ops, "ops", "", "run only these operators (comma-separated: negate, drop, cmp, skip)")
	fs.IntVar(&f.limit, "limit", 0, "run an even sample of this many mutants of the selection (0: all)")
	fs.StringVar(&f.jsonOut, "json", "", "write the results as JSON to this file")
	fs.StringVar(&f.equivalent, "equivalent", "tools/mutate/equivalent.tsv", "table of mutants argued equivalent (ID, tab, reason), relative to the module root")
	fs.IntVar(&f.maxStates, "max-states", 20000, "state budget of a bare ROW's breadth-first search")
	fs.IntVar(&f.walks, "walks", 200, "random walks of a bare ROW that names walks")
	fs.IntVar(&f.parallel, "parallel", 1, "mutants checked at once")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "wall-clock limit per mutant")
	fs.DurationVar(&f.perConfig, "time-per-config", 0, "stop each configuration's search after this long (0: the state budget only)")
	fs.BoolVar(&f.liveness, "liveness", true, "check the liveness properties too")
	fs.BoolVar(&f.copyMode, "copy", false, "apply one mutation to the copy and build once per mutant (slow), instead of one mutant schema")
	fs.BoolVar(&f.keep, "keep", false, "keep the scratch directory")
	fs.BoolVar(&f.verbose, "v", false, "print every mutant's verdict as it comes")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mutate-model run: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if f.maxStates <= 0 || f.walks <= 0 || f.parallel <= 0 || f.limit < 0 || f.timeout <= 0 || f.perConfig < 0 {
		fmt.Fprintln(stderr, "mutate-model run: --max-states, --walks, --parallel and --timeout must be > 0; --limit and --time-per-config >= 0")
		return exitUsage
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model run: %v\n", err)
		return exitUsage
	}
	killers, err := parseKillers(f.killers, f.maxStates, f.walks)
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model run: --killers: %v\n", err)
		return exitUsage
	}
	var complete []killer
	if f.complete != "" {
		if complete, err = parseKillers(f.complete, f.maxStates, f.walks); err != nil {
			fmt.Fprintf(stderr, "mutate-model run: --complete: %v\n", err)
			return exitUsage
		}
	}
	all, err := mutate.Find(filepath.Join(root, f.pkg), mutate.ModelOptions())
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model run: --pkg %s: %v\n", f.pkg, err)
		return exitUsage
	}
	sel, err := selectMutants(all, f)
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model run: %v\n", err)
		return exitUsage
	}
	equiv, err := readEquivalent(filepath.Join(root, f.equivalent))
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model run: --equivalent: %v\n", err)
		return exitUsage
	}
	start := time.Now()
	rep, err := runMutants(root, all, sel, killers, complete, equiv, f, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model run: %v\n", err)
		return exitFail
	}
	rep.Seconds = time.Since(start).Seconds()
	printReport(stdout, rep)
	if f.jsonOut != "" {
		if err := writeJSON(f.jsonOut, rep); err != nil {
			fmt.Fprintf(stderr, "mutate-model run: --json: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "results written to %s\n", f.jsonOut)
	}
	return exitOK
}

// selectMutants applies --only, --ops, --shard and --limit.
func selectMutants(all []mutate.Mutant, f runFlags) ([]mutate.Mutant, error) {
	sel := all
	if f.only != "" {
		want := map[string]bool{}
		for _, id := range splitList(f.only) {
			want[id] = true
		}
		sel = nil
		for _, m := range all {
			if want[m.ID] {
				sel = append(sel, m)
				delete(want, m.ID)
			}
		}
		if len(want) > 0 {
			var missing []string
			for id := range want {
				missing = append(missing, id)
			}
			sort.Strings(missing)
			return nil, fmt.Errorf("--only: no mutant %s (mutate-model list shows them)", strings.Join(missing, ", "))
		}
	}
	if f.ops != "" {
		ops := map[mutate.Op]bool{}
		for _, o := range splitList(f.ops) {
			switch op := mutate.Op(o); op {
			case mutate.OpNegate, mutate.OpDrop, mutate.OpCmp, mutate.OpSkip:
				ops[op] = true
			default:
				return nil, fmt.Errorf("--ops: unknown operator %q (have negate, drop, cmp, skip)", o)
			}
		}
		var out []mutate.Mutant
		for _, m := range sel {
			if ops[m.Op] {
				out = append(out, m)
			}
		}
		sel = out
	}
	if f.shard != "" {
		i, n, err := parseShard(f.shard)
		if err != nil {
			return nil, err
		}
		sel = mutate.Shard(sel, i, n)
	}
	if f.limit > 0 && f.limit < len(sel) {
		out := make([]mutate.Mutant, 0, f.limit)
		for k := 0; k < f.limit; k++ {
			out = append(out, sel[k*len(sel)/f.limit])
		}
		sel = out
	}
	return sel, nil
}

func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard must be i/n with 1 <= i <= n, got %q", s)
	}
	return i, n, nil
}

// readEquivalent reads the table of mutants argued equivalent: one ID, a
// tab and the one-line reason a line; # starts a comment. A missing file is
// an empty table.
func readEquivalent(path string) (map[string]string, error) {
	out := map[string]string{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: want ID<tab>reason", path, ln)
		}
		out[strings.TrimSpace(id)] = strings.TrimSpace(reason)
	}
	return out, sc.Err()
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run it inside the module", dir)
		}
	}
}

// copyModule copies the module to dst, without .git and the build outputs.
func copyModule(root, dst string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".git" || rel == "bin" || rel == "artifacts" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// build builds this command in dir to out; the error carries the
// compiler's first lines.
func build(dir, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/mutate-model")
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) > 5 {
			lines = lines[:5]
		}
		return fmt.Errorf("%v: %s", err, strings.Join(lines, " | "))
	}
	return nil
}

// runMutants runs the selected mutants: the checker built once with every
// mutant behind a switch (the schema; with --copy, a copy of the module per
// worker), the baseline with no mutant on, f.parallel workers over sel, and
// the tally.
func runMutants(root string, all, sel []mutate.Mutant, killers, complete []killer, equiv map[string]string, f runFlags, stderr io.Writer) (*report, error) {
	scratch, err := os.MkdirTemp("", "mutate-model-")
	if err != nil {
		return nil, err
	}
	if f.keep {
		fmt.Fprintf(stderr, "scratch directory: %s\n", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	mod := filepath.Join(scratch, "mod")
	if err := copyModule(root, mod); err != nil {
		return nil, fmt.Errorf("copying the module: %v", err)
	}
	t0 := time.Now()
	bin, err := buildChecker(mod, scratch, all, f)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "%d mutants in %s, %d selected; checker built in %.1f s\n", len(all), f.pkg, len(sel), time.Since(t0).Seconds())
	var searches, refiners []killer
	for _, k := range killers {
		if k.refinement() {
			refiners = append(refiners, k)
		} else {
			searches = append(searches, k)
		}
	}
	p := &mutantPool{f: f, sel: sel, index: map[string]int{}, equiv: equiv, scratch: scratch, mod: mod, bin: bin,
		killers: searches, complete: complete, refiners: refiners, stderr: stderr,
		checkArgs: []string{"check", "--max-states", strconv.Itoa(f.maxStates), "--walks", strconv.Itoa(f.walks),
			"--time-per-config", f.perConfig.String(), "--liveness=" + strconv.FormatBool(f.liveness)}}
	for i, m := range all {
		p.index[m.ID] = i
	}
	if err := p.baseline(len(all)); err != nil {
		return nil, err
	}
	p.run()
	p.rep.tally()
	return p.rep, nil
}

// buildChecker writes the mutant schema into the module copy's package
// (unless --copy) and builds the checker under scratch; it returns the
// checker's path.
func buildChecker(mod, scratch string, all []mutate.Mutant, f runFlags) (string, error) {
	pkgDir := filepath.Join(mod, f.pkg)
	bin := filepath.Join(scratch, "checker")
	if !f.copyMode {
		files, err := mutate.Schema(pkgDir, filepath.Base(f.pkg), all)
		if err != nil {
			return "", fmt.Errorf("mutant schema: %v", err)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(pkgDir, name), b, 0o644); err != nil {
				return "", err
			}
		}
	}
	if err := build(mod, bin); err != nil {
		return "", fmt.Errorf("building the checker (mutant schema) failed, a bug of the mutator: %v", err)
	}
	return bin, nil
}

// mutantPool runs the selected mutants on parallel workers; the report's
// KillsBy, results and done are guarded by mu.
type mutantPool struct {
	f                 runFlags
	sel               []mutate.Mutant
	index             map[string]int // a mutant's index in the package's whole list
	equiv             map[string]string
	scratch, mod, bin string
	checkArgs         []string
	killers, complete []killer // less those the baseline violates
	refiners          []killer // the refinement killers (route 2), met after the searches
	baseBy            map[string]checkLine
	stderr            io.Writer
	t0                time.Time // the baseline's start: progress lines count from it

	mu      sync.Mutex
	rep     *report
	results []result
	done    int
}

// baseline runs every search on the same build with no mutant switched on.
// A search violated there cannot kill a mutant: it is dropped from the
// killers and the complete searches, and reported.
func (p *mutantPool) baseline(mutants int) error {
	f := p.f
	p.t0 = time.Now()
	base, _, err := runChecker(p.bin, -1, append(p.checkArgs, "--all", "--killers", killerList(append(append(append([]killer(nil), p.killers...), p.complete...), p.refiners...))), 0)
	if err != nil {
		return fmt.Errorf("baseline: %v", err)
	}
	rep := &report{Package: f.pkg, Mutants: mutants, Shard: f.shard, Selected: len(p.sel), MaxStates: f.maxStates, Walks: f.walks,
		Baseline: base, KillsBy: map[string]int{}}
	p.rep, p.baseBy = rep, map[string]checkLine{}
	violated := map[string]bool{}
	for _, l := range base {
		p.baseBy[l.Killer] = l
		if l.Outcome == "violation" {
			rep.Dropped = append(rep.Dropped, l)
			violated[l.Killer] = true
		}
	}
	keep := func(ks []killer) (out []killer, names []string) {
		for _, k := range ks {
			if !violated[k.String()] {
				out = append(out, k)
				names = append(names, k.String())
			}
		}
		return out, names
	}
	p.killers, rep.Killers = keep(p.killers)
	p.complete, rep.Complete = keep(p.complete)
	var refiners []string
	p.refiners, refiners = keep(p.refiners)
	rep.Killers = append(rep.Killers, refiners...)
	fmt.Fprintf(p.stderr, "baseline: %d searches in %.1f s", len(base), time.Since(p.t0).Seconds())
	for _, d := range rep.Dropped {
		fmt.Fprintf(p.stderr, "; %s dropped (violated without a mutant: %s)", d.Killer, d.Property)
	}
	fmt.Fprintln(p.stderr)
	if len(p.killers)+len(p.refiners) == 0 {
		return errors.New("every killer is violated without a mutant")
	}
	return nil
}

// run runs every selected mutant on f.parallel workers and sets the
// report's results, in sel's order.
func (p *mutantPool) run() {
	p.results = make([]result, len(p.sel))
	var wg sync.WaitGroup
	jobs := make(chan int)
	for w := 0; w < p.f.parallel; w++ {
		wg.Add(1)
		go p.worker(w, jobs, &wg)
	}
	for k := range p.sel {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	p.rep.Results = p.results
}

// ordered lists the killers by kills so far (most first), ties in their
// given order: a mutant meets the likeliest killer first.
func (p *mutantPool) ordered() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ks := append([]killer(nil), p.killers...)
	sort.SliceStable(ks, func(a, b int) bool { return p.rep.KillsBy[ks[a].String()] > p.rep.KillsBy[ks[b].String()] })
	return killerList(ks)
}

// worker w runs the mutants whose indexes in sel it takes from jobs: on the
// shared checker, or with --copy on its own copy of the module.
func (p *mutantPool) worker(w int, jobs <-chan int, wg *sync.WaitGroup) {
	defer wg.Done()
	f := p.f
	wbin, wmod := p.bin, p.mod
	if f.copyMode {
		wmod = filepath.Join(p.scratch, fmt.Sprintf("mod%d", w))
		if w > 0 {
			if err := copyModule(p.mod, wmod); err != nil {
				fmt.Fprintf(p.stderr, "worker %d: copying the module: %v\n", w, err)
				return
			}
		} else {
			wmod = p.mod
		}
		wbin = filepath.Join(p.scratch, fmt.Sprintf("checker%d", w))
	}
	for k := range jobs {
		p.record(k, p.runOne(p.sel[k], wmod, wbin))
	}
}

// runOne runs mutant m against the searches (route 1), a survivor that
// reached the original's states against the complete searches, and a
// survivor of both against the refinement killers (route 2): so a mutant
// the refinement kills survived every search, and the two scores stay
// apart.
func (p *mutantPool) runOne(m mutate.Mutant, wmod, wbin string) result {
	f := p.f
	r := result{Mutant: m, Index: p.index[m.ID]}
	t := time.Now()
	sw := r.Index // the schema's switch; with --copy the build is the mutant
	if f.copyMode {
		sw = -1
	}
	first, refiners := p.ordered(), p.refiners
	if first == "" { // only refinement killers
		first, refiners = killerList(p.refiners), nil
	}
	args := append(append([]string(nil), p.checkArgs...), "--killers", first)
	if f.copyMode {
		r = runCopy(r, wmod, wbin, f, args)
	} else {
		r = classify(r, wbin, sw, args, f.timeout)
	}
	more := func(ks []killer) {
		x := classify(result{Mutant: m, Index: r.Index}, wbin, sw,
			append(append([]string(nil), p.checkArgs...), "--killers", killerList(ks)), f.timeout)
		x.Checks = append(r.Checks, x.Checks...)
		r = x
	}
	// A survivor that changed some step and reached the original's
	// states wherever it did meets the complete searches: a kill,
	// or the evidence of equivalence. (One that reached other
	// states within a delay bound is no candidate.)
	pre := r
	finish(&pre, p.baseBy, nil)
	if pre.Status == stSurvived && pre.SameAsBaseline && len(p.complete) > 0 && !f.copyMode {
		more(p.complete)
	}
	if r.Status == stSurvived && len(refiners) > 0 {
		more(refiners)
	}
	r.Seconds = time.Since(t).Seconds()
	finish(&r, p.baseBy, p.equiv)
	return r
}

// record stores the result of sel[k], counts its kill and prints progress.
func (p *mutantPool) record(k int, r result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Status == stKilled && r.Killer != "" {
		p.rep.KillsBy[r.Killer]++
	}
	p.results[k] = r
	p.done++
	if p.f.verbose {
		fmt.Fprintf(p.stderr, "[%d/%d] %s %s %s %s %s (%.1f s)\n", p.done, len(p.sel), r.ID, r.Status, r.Route, r.Killer, r.Property, r.Seconds)
	} else if p.done%25 == 0 {
		fmt.Fprintf(p.stderr, "%d/%d mutants, %.0f s\n", p.done, len(p.sel), time.Since(p.t0).Seconds())
	}
}

// tally counts the results by status and sets the two scores: killed by a
// search (route 1), and killed by either route, over killed, survived and
// timed out.
func (rep *report) tally() {
	for _, r := range rep.Results {
		switch r.Status {
		case stKilled:
			rep.Killed++
			if r.Route == routeSearch {
				rep.KilledBySearch++
			}
		case stSurvived:
			rep.Survived++
			if !r.Reached {
				rep.NotReached++
			}
		case stTimeout:
			rep.Timeouts++
		case stEquivalent:
			rep.Equivalent++
		case stBroken:
			rep.Broken++
		}
	}
	if n := rep.Killed + rep.Survived + rep.Timeouts; n > 0 {
		rep.Score = 100 * float64(rep.Killed) / float64(n)
		rep.ScoreSearch = 100 * float64(rep.KilledBySearch) / float64(n)
	}
}

func killerList(ks []killer) string {
	var names []string
	for _, k := range ks {
		names = append(names, k.String())
	}
	return strings.Join(names, ",")
}

func infected(lines []checkLine) bool {
	for _, l := range lines {
		if l.Infected {
			return true
		}
	}
	return false
}

// runCopy applies the one mutation to the module copy, builds, checks and
// restores the file.
func runCopy(r result, mod, bin string, f runFlags, args []string) result {
	path := filepath.Join(mod, f.pkg, r.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		r.Status, r.Detail = stBroken, err.Error()
		return r
	}
	defer os.WriteFile(path, orig, 0o644)
	mut, err := mutate.Apply(orig, r.Mutant)
	if err == nil {
		err = os.WriteFile(path, mut, 0o644)
	}
	if err == nil {
		err = build(mod, bin)
	}
	if err != nil {
		r.Status, r.Detail = stBroken, err.Error()
		return r
	}
	return classify(r, bin, -1, args, f.timeout)
}

// classify runs the checker on one mutant. A panic is the kill of the
// killer that was running (the first with no line yet).
func classify(r result, bin string, mutant int, args []string, timeout time.Duration) result {
	lines, crash, err := runChecker(bin, mutant, args, timeout)
	r.Checks = lines
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		r.Status, r.Detail = stTimeout, "no verdict within --timeout"
	case crash == "init":
		r.Status, r.Detail = stBroken, "panics at start-up"
	case crash != "":
		r.Status, r.Property, r.Detail = stKilled, "panic", crash
		if ks := argKillers(args); len(lines) < len(ks) {
			r.Killer = ks[len(lines)]
		}
		r.Route = routeOf(r.Killer)
	case err != nil:
		r.Status, r.Detail = stBroken, err.Error()
	default:
		r.Status = stSurvived
		for _, l := range lines {
			if l.Outcome == "violation" {
				r.Status, r.Config, r.Killer, r.Property = stKilled, l.Config, l.Killer, l.Property
				r.Route = routeOf(l.Killer)
				if l.Detail != "" {
					r.Detail = l.Detail
				}
			}
		}
	}
	return r
}

// argKillers is the --killers list of a checker's arguments.
func argKillers(args []string) []string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--killers" {
			return splitList(args[i+1])
		}
	}
	return nil
}

// routeOf is the route of a kill by killer (ROW@MODE or refine@N; "" for
// a panic no killer is known for: counted with the searches).
func routeOf(killer string) string {
	if strings.HasPrefix(killer, refineKiller+"@") {
		return routeRefinement
	}
	return routeSearch
}

// finish classes a survivor: reached or not (some run infected), the same
// states as the original where it changed a step, and equivalent when a
// complete search it infected and every complete search it met reached
// the original's states with the original's transitions, or when the
// equivalence table argues it.
func finish(r *result, base map[string]checkLine, equiv map[string]string) {
	reason, argued := equiv[r.ID]
	r.Reached = infected(r.Checks)
	if r.Status != stSurvived {
		if argued && r.Status == stKilled {
			r.Detail = "listed equivalent, but killed: the table's reason is stale"
		}
		return
	}
	same, evidence := true, ""
	for _, l := range r.Checks {
		b, ok := base[l.Killer]
		if !ok || l.States == 0 {
			continue
		}
		eq := l.States == b.States && l.StatesHash == b.StatesHash && l.Transitions == b.Transitions && l.Outcome == b.Outcome
		if l.Infected && !eq {
			same = false
		}
		if l.Outcome == "ok" {
			if !eq {
				evidence = "-"
			} else if l.Infected && evidence == "" {
				evidence = fmt.Sprintf("complete search %s: the mutated step is taken, and the original's %d states (hash %s) and %d transitions are reached", l.Killer, l.States, l.StatesHash, l.Transitions)
			}
		}
	}
	r.SameAsBaseline = r.Reached && same
	switch {
	case evidence != "" && evidence != "-":
		r.Status, r.Detail = stEquivalent, evidence
	case argued:
		r.Status, r.Detail = stEquivalent, reason
	}
}

// runChecker runs the checker binary with the mutant switched on (-1:
// none) and parses its lines. crash is "init" when it panicked before it
// started checking, else a panic's first line, or "".
func runChecker(bin string, mutant int, args []string, timeout time.Duration) ([]checkLine, string, error) {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", mutate.SchemaEnv, mutant))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	var lines []checkLine
	ready := false
	for _, l := range strings.Split(out.String(), "\n") {
		if l == readyLine {
			ready = true
			continue
		}
		if l == "" {
			continue
		}
		var c checkLine
		if jerr := json.Unmarshal([]byte(l), &c); jerr != nil {
			return lines, "", fmt.Errorf("checker output %q: %v", l, jerr)
		}
		lines = append(lines, c)
	}
	if i := strings.Index(errb.String(), "panic: "); i >= 0 {
		first := strings.SplitN(errb.String()[i:], "\n", 2)[0]
		if !ready {
			return lines, "init", nil
		}
		return lines, first, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == exitFail {
		return lines, "", nil // a violation
	}
	if err != nil {
		return lines, "", fmt.Errorf("checker: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	return lines, "", nil
}

func printReport(w io.Writer, r *report) {
	shard := ""
	if r.Shard != "" {
		shard = ", shard " + r.Shard
	}
	fmt.Fprintf(w, "mutate-all: %d mutants in %s%s, %d checked in %.0f s (%.1f s each); %d killers, %d complete searches\n",
		r.Mutants, r.Package, shard, r.Selected, r.Seconds, r.Seconds/float64(max(1, r.Selected)), len(r.Killers), len(r.Complete))
	for _, d := range r.Dropped {
		fmt.Fprintf(w, "  dropped %s: violated without a mutant (%s)\n", d.Killer, d.Property)
	}
	n := r.Killed + r.Survived + r.Timeouts
	fmt.Fprintf(w, "score, searches (route 1): %d killed of %d non-equivalent (%.1f %%)\n", r.KilledBySearch, n, r.ScoreSearch)
	fmt.Fprintf(w, "score, searches or refinement (routes 1 and 2): %d killed of %d non-equivalent (%.1f %%); %d killed by the refinement only\n",
		r.Killed, n, r.Score, r.Killed-r.KilledBySearch)
	fmt.Fprintf(w, "%d survived (%d never reached), %d timed out, %d equivalent, %d broken\n",
		r.Survived, r.NotReached, r.Timeouts, r.Equivalent, r.Broken)
	kills := map[string]int{}
	for _, x := range r.Results {
		if x.Status == stKilled {
			k := x.Route + ": " + x.Killer + " " + x.Property
			if x.Killer == "" {
				k = "search: (a panic of the model)"
			}
			kills[k]++
		}
	}
	var ks []string
	for k := range kills {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(a, b int) bool {
		return kills[ks[a]] > kills[ks[b]] || kills[ks[a]] == kills[ks[b]] && ks[a] < ks[b]
	})
	fmt.Fprintln(w, "killed by:")
	for _, k := range ks {
		fmt.Fprintf(w, "  %4d  %s\n", kills[k], k)
	}
	groups := []struct {
		title string
		in    func(result) bool
	}{
		{"survived, reached: a step changed and no property noticed", func(x result) bool { return x.Status == stSurvived && x.Reached }},
		{"survived, never reached: no killer's run took the changed step", func(x result) bool { return x.Status == stSurvived && !x.Reached }},
		{stTimeout, func(x result) bool { return x.Status == stTimeout }},
		{stEquivalent, func(x result) bool { return x.Status == stEquivalent }},
		{stBroken, func(x result) bool { return x.Status == stBroken }},
	}
	for _, g := range groups {
		var rows []result
		for _, x := range r.Results {
			if g.in(x) {
				rows = append(rows, x)
			}
		}
		if len(rows) == 0 {
			continue
		}
		sort.Slice(rows, func(a, b int) bool {
			if rows[a].File != rows[b].File {
				return rows[a].File < rows[b].File
			}
			return rows[a].Line < rows[b].Line
		})
		fmt.Fprintf(w, "%s (%d):\n", g.title, len(rows))
		for _, x := range rows {
			note := ""
			if x.SameAsBaseline {
				note = "  [the original's states wherever it changed a step]"
			}
			if x.Detail != "" && x.Status != stSurvived {
				note += "  (" + x.Detail + ")"
			}
			fmt.Fprintf(w, "  %s  %s:%d  %s  [%s => %s]%s\n", x.ID, x.File, x.Line, x.Source, oneLine(x.Orig), oneLine(x.Repl), note)
		}
	}
}

func writeJSON(path string, r *report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

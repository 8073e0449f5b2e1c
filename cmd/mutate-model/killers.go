package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"cdcspec/model"
	"cdcspec/search"
	"cdcspec/tools/mutate/mutant"
)

// A killer is one search of one row (a standard configuration or a matrix
// row) that a mutant must survive: ROW@MODE, the mode one of
//
//	dK    the delay-bounded search to K delays (complete up to K delays of
//	      the default scheduler: deep runs for few states; docs/reduction.md)
//	sN    the breadth-first search within N distinct states
//	wN    N seeded random walks of the row's walk depth (60 if it has none)
//	all   the complete search (no bound but the memory): equivalence evidence
//
// A name without @ is the row's own mode: walks when the row names walks
// (Config.Walks), else the breadth-first search within --max-states.
//
// The one killer that is not a search is refine@N (refine.go): N seeded
// runs of the implementation, each followed step by step by the model
// (route 2: a divergence from the HEAD-faithful implementation kills). It
// has no row; it always comes after the searches (ordered), so a mutant
// it kills survived every search, and the runner scores it apart.
type killer struct {
	Row  string
	Mode byte // 'd', 's', 'w', 'a', or 'r' (refine@N)
	N    int
	cfg  model.Config
}

// refinement reports whether k is the refinement killer (not a search).
func (k killer) refinement() bool { return k.Mode == 'r' }

func (k killer) String() string {
	switch k.Mode {
	case 'a':
		return k.Row + "@all"
	case 'r':
		return fmt.Sprintf("%s@%d", refineKiller, k.N)
	default:
		return fmt.Sprintf("%s@%c%d", k.Row, k.Mode, k.N)
	}
}

// parseKiller reads ROW[@MODE]; states and walks are the defaults of a
// bare row.
func parseKiller(s string, states, walks int) (killer, error) {
	row, mode, hasMode := strings.Cut(strings.TrimSpace(s), "@")
	if row == refineKiller {
		n, err := strconv.Atoi(mode)
		if !hasMode || err != nil || n <= 0 || n > maxRefineRuns {
			return killer{}, fmt.Errorf("killer %q: refine wants @N, the number of seeded runs (1..%d)", s, maxRefineRuns)
		}
		return killer{Row: refineKiller, Mode: 'r', N: n}, nil
	}
	cfg, err := lookupConfig(row)
	if err != nil {
		return killer{}, err
	}
	k := killer{Row: row, cfg: cfg}
	switch {
	case !hasMode && cfg.Walks > 0:
		k.Mode, k.N = 'w', walks
	case !hasMode:
		k.Mode, k.N = 's', states
	case mode == "all":
		k.Mode = 'a'
	case len(mode) >= 2 && strings.ContainsRune("dsw", rune(mode[0])):
		n, err := strconv.Atoi(mode[1:])
		if err != nil || n < 0 || mode[0] != 'd' && n == 0 || mode[0] == 'd' && n > search.MaxDelayBound {
			return killer{}, fmt.Errorf("killer %q: %c wants a number (d: 0..%d, s and w: > 0)", s, mode[0], search.MaxDelayBound)
		}
		k.Mode, k.N = mode[0], n
	default:
		return killer{}, fmt.Errorf("killer %q: mode %q is not dK, sN, wN or all", s, mode)
	}
	return k, nil
}

func parseKillers(list string, states, walks int) ([]killer, error) {
	var out []killer
	for _, s := range splitList(list) {
		k, err := parseKiller(s, states, walks)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no killer in %q", list)
	}
	return out, nil
}

// defaultKillers is the order a mutant meets its killers in before the
// runner reorders them by kills (run --killers overrides it): every matrix
// row (the standard configurations among them) by the delay-bounded search
// to 2 delays, a few hundred to a few thousand states each but every depth,
// the row's whole story with a few deviations from the default schedule;
// the standard configurations to 4 delays; and the walks of the
// configurations that name walks. Measured in SHARD=1/8 (SPEC.md 10.1): the
// standard configurations within 20,000 states killed none of the mutants
// these left (5.2 s of one core a survivor), and the rows to 3 delays with
// the standard configurations to 5 killed none of the survivors re-run.
// Then deepKillers, and last the refinement killer (refine@N, route 2),
// which the runner scores apart.
func defaultKillers() string {
	var ks []string
	for _, r := range model.Matrix() {
		ks = append(ks, r.Name+"@d2")
	}
	for _, n := range model.StandardNames() {
		ks = append(ks, n+"@d4")
	}
	ks = append(ks, deepKillers...)
	for _, n := range model.StandardNames() {
		if cfg, _ := model.Standard(n); cfg.Walks > 0 {
			ks = append(ks, n) // its walks (--walks)
		}
	}
	ks = append(ks, fmt.Sprintf("%s@%d", refineKiller, defaultRefineRuns))
	return strings.Join(ks, ",")
}

// deepKillers are searches past the default depth that kill mutants the
// default list only reaches or never reaches (SPEC.md 10.1, measured on
// SHARD=1/8's never-reached survivors): the rows added for the mutants to 4
// delays (maintainer-move-3-nodes killed
// movemaintainer:coordMoveOnNodeRemoved:negate:5833d3f8 at 4 delays, not
// at 2), and merge to its stated bound 6, where a node dies while the merge
// runs (three kills in maintOnNodeRemoved and mergeAbort).
var deepKillers = []string{"maintainer-move-3-nodes@d4", "barrier-3-nodes@d4", "merge@d6"}

// runKiller runs one killer with one worker (the runner's parallelism is
// across mutants) and reports whether the active mutant infected it.
func runKiller(k killer, limit time.Duration, liveness bool, memory int64) (checkLine, error) {
	b := search.Bounds{Workers: 1, SafetyOnly: !liveness, Memory: memory}
	if limit > 0 {
		stop := make(chan struct{})
		t := time.AfterFunc(limit, func() { close(stop) })
		defer t.Stop()
		b.Stop = stop
	}
	mutant.Reset()
	if k.refinement() {
		return runRefine(k, b.Stop)
	}
	var r model.Result
	var set model.StateSet
	var err error
	switch k.Mode {
	case 'w':
		depth := k.cfg.WalkDepth
		if depth == 0 {
			depth = 60
		}
		r, err = model.Simulate(k.cfg, b, search.Walks{Seed: 1, Count: k.N, Depth: depth})
	case 'd':
		b.DelayBounded, b.DelayBound = true, k.N
		r, set, err = model.CheckStateSet(k.cfg, b)
	case 's':
		b.MaxStates = k.N
		r, set, err = model.CheckStateSet(k.cfg, b)
	default:
		r, set, err = model.CheckStateSet(k.cfg, b)
	}
	if err != nil {
		return checkLine{}, err
	}
	l := checkLine{Killer: k.String(), Config: k.Row, Distinct: r.Distinct, Transitions: r.Transitions, Depth: r.Depth,
		Seconds: r.Seconds, Infected: mutant.Infected(), States: set.Count}
	if set.Count > 0 {
		l.StatesHash = strconv.FormatUint(set.Hash, 16)
	}
	switch r.Outcome {
	case search.OK:
		l.Outcome = "ok"
	case search.Violation:
		l.Outcome = "violation"
		l.Property = string(r.Violation.Property)
	case search.BoundReached:
		l.Outcome = "bound"
		if _, ok := r.CompleteUpToDelays(); ok {
			l.Outcome = "delays"
		}
	default:
		l.Outcome = "inconclusive"
	}
	return l, nil
}

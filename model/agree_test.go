package model

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/search"
	"cdcspec/spec"
)

// One definition per property: a property's meaning is its spec monitor
// (spec/monitors.go). The model's predicates (props.go) are a second
// implementation over states, so these tests check them against the monitors
// in both directions, step by step, on random walks and on every catalogued
// counterexample: a predicate that fires where the monitor does not, or the
// reverse, is a disagreement, and the test writes the walk as a scenario file.
//
// Allowances (each bounded and counted):
//
//   - error-never-dropped: the model's ghost (ErrDrop) is set on the step
//     whose accepted status dropped the error; the monitor can only tell at
//     the next accepted status of the changefeed that nothing handled it. So
//     the monitor must report it later, with the dropped status as its first
//     evidence (the step the predicate fired), at most maxErrLag steps later;
//     the walk continues with the fair schedule until it does. A walk whose
//     schedule ends without another accepted status cannot be judged by the
//     monitor (counted as unjudged; at most a tenth of the drops).
//   - every-span-replicated, checkpoint-advances-after-heal: the model judges
//     the goals on the quiesced state of the fair schedule, the monitors at
//     the Quiesced marker that follows it. A walk whose fair schedule hits its
//     bound (no quiescence) judges neither (counted; at most 1 % of walks).
//
// Every other property is judged on the same step by both sides. A walk ends
// at its first safety violation other than error-never-dropped (the model
// checker stops there too), so "first violation" is well defined.

var agreeWalks = flag.Int("agree-walks", 0, "random walks for TestPredicatesAgreeWithMonitors (0: the default, or 10x with -long)")

// maxErrLag bounds the steps between the model's error-never-dropped and the
// monitor's report (the next accepted status, found by the fair schedule).
const maxErrLag = 30

// --- the only uses of the search engine's code (liveness.go, story.go) ---

// namedStep applies a to s and returns its events with the stable
// dispatcher names of a counterexample story (the model renumbers
// DispatcherIDs after every step; the monitors key dispatchers by name).
func namedStep(names *idNames, cfg *Config, s *State, a Action) []spec.Event {
	return names.stepNamed(cfg, s, a, false).Events
}

// fairSchedule returns the fair schedule from s (heal, then rounds until the
// system repeats itself), the heal-time target, the number of leading heal
// actions, and whether it quiesced within its bound.
func fairSchedule(cfg *Config, s State) (acts []Action, target uint8, healSteps int, quiesced bool) {
	fr := search.Settle[State, Action](newSystem(cfg), s, search.Bounds{})
	return fr.Schedule, fr.Healed.UpTs, fr.Healing, fr.Verdict != search.Unsettled
}

// withBug switches a catalogued bug on ("" leaves cfg as it is). It is the
// one place these tests switch bugs.
func withBug(t testing.TB, cfg Config, bug string) Config {
	if bug == "" {
		return cfg
	}
	b, ok := spec.LookupBug(bug)
	require.True(t, ok, "unknown bug %q", bug)
	cfg.Bugs = cfg.Bugs.With(b.ID)
	return cfg
}

// --- the judge ---

// propIndex orders the properties as spec.Properties does.
var propIndex = func() map[spec.Property]int {
	m := map[spec.Property]int{}
	for i, in := range spec.Properties() {
		m[in.Name] = i
	}
	return m
}()

// judge runs one walk's events through a fresh spec checker and compares the
// model's predicates with the monitors' reports after every step.
type judge struct {
	cfg     *Config
	chk     *spec.Checker
	names   *idNames
	s       State
	steps   int
	actions []string     // the walk as scenario lines, for failure reports
	events  []spec.Event // every event observed, with Time = step

	modelAt   [32]int // step of the model's first violation of each property (0: none)
	monitorAt [32]int // step of the monitors' first report of each property
	errLag    int     // steps from the model's error-never-dropped to the monitor's report
	stopped   bool    // a safety property other than error-never-dropped broke: the walk ends
	noQuiesce bool    // the fair schedule hit its bound: liveness not judged
	problems  []string
}

func newJudge(cfg *Config) *judge {
	j := &judge{cfg: cfg, chk: spec.NewChecker(cfg.MonitorConfig()), names: newIDNames(), s: Init(cfg)}
	for _, e := range InitEvents(cfg) {
		j.chk.Observe(e)
		j.events = append(j.events, e)
	}
	return j
}

func (j *judge) fail(format string, args ...any) {
	j.problems = append(j.problems, fmt.Sprintf("step %d: ", j.steps)+fmt.Sprintf(format, args...))
}

// do applies a (extra events, e.g. markers, are observed before the step's own).
func (j *judge) do(a Action, before ...spec.Event) {
	j.steps++
	j.actions = append(j.actions, dslAction(&j.s, a))
	prev := j.s
	evs := append(before, namedStep(j.names, j.cfg, &j.s, a)...)
	j.observe(&prev, evs)
}

// observe feeds the step's events and compares the verdicts.
func (j *judge) observe(prev *State, evs []spec.Event) {
	var reported [32]*spec.Violation
	for _, e := range evs {
		e.Time = int64(j.steps)
		j.events = append(j.events, e)
		for _, v := range j.chk.Observe(e) {
			i := propIndex[v.Property]
			if reported[i] == nil {
				v := v
				reported[i] = &v
			}
		}
	}
	for _, p := range safetyProps {
		i := propIndex[p.name]
		msg := p.fn(j.cfg, prev, &j.s)
		if msg != "" && j.modelAt[i] == 0 {
			j.modelAt[i] = j.steps
		}
		v := reported[i]
		if v != nil && j.monitorAt[i] == 0 {
			j.monitorAt[i] = j.steps
		}
		if p.name == spec.ErrorNeverDropped {
			j.judgeErr(v)
			continue
		}
		modelNew := j.modelAt[i] == j.steps
		monitorNew := v != nil && j.monitorAt[i] == j.steps
		switch {
		case modelNew && !monitorNew:
			j.fail("the model's %s fired, the monitor did not: %s", p.name, msg)
		case monitorNew && !modelNew:
			j.fail("the monitor reported %s, the model's predicate did not fire (model first at step %d): %s", p.name, j.modelAt[i], v.Message)
		}
		if modelNew || monitorNew {
			j.stopped = true
		}
	}
}

// judgeErr applies error-never-dropped's allowance: the monitor reports a
// dropped error at the next accepted status, naming the dropped status.
func (j *judge) judgeErr(v *spec.Violation) {
	i := propIndex[spec.ErrorNeverDropped]
	if v == nil || j.monitorAt[i] != j.steps {
		return
	}
	switch {
	case j.modelAt[i] == 0:
		j.fail("the monitor reported error-never-dropped, the model's ghost was never set: %s", v.Message)
	case v.Evidence[0].Time != int64(j.modelAt[i]):
		j.fail("the monitor's dropped status is from step %d, the model's ghost was set at step %d: %s", v.Evidence[0].Time, j.modelAt[i], v.Message)
	default:
		j.errLag = j.steps - j.modelAt[i]
		if j.errLag > maxErrLag {
			j.fail("the monitor reported error-never-dropped %d steps after the model (bound %d)", j.errLag, maxErrLag)
		}
	}
}

// errPending: the model saw a dropped error the monitor has not judged yet.
func (j *judge) errPending() bool {
	i := propIndex[spec.ErrorNeverDropped]
	return j.modelAt[i] != 0 && j.monitorAt[i] == 0
}

// settle runs the fair schedule with the FaultsHealed and Quiesced markers
// and compares the liveness goals with the monitors at quiescence. It
// reports whether the schedule quiesced (else liveness was not judged).
func (j *judge) settle() bool {
	acts, target, heal, quiesced := fairSchedule(j.cfg, j.s)
	healed := spec.Event{Kind: spec.FaultsHealed, Changefeed: Changefeed, Checkpoint: uint64(target)}
	for k, a := range acts {
		if j.stopped {
			return false
		}
		if k == heal {
			j.do(a, healed)
		} else {
			j.do(a)
		}
	}
	if j.stopped {
		return false
	}
	if !quiesced {
		j.noQuiesce = true
		return false
	}
	if heal == len(acts) {
		j.steps++
		j.observe(&j.s, []spec.Event{healed})
	}
	var reported [32]bool
	qev := spec.Event{Kind: spec.Quiesced, Changefeed: Changefeed, Time: int64(j.steps)}
	j.events = append(j.events, qev)
	for _, v := range j.chk.Observe(qev) {
		reported[propIndex[v.Property]] = true
	}
	type goal struct {
		p   spec.Property
		msg string
	}
	var goals []goal
	for _, g := range goalProps {
		goals = append(goals, goal{g.name, g.fn(j.cfg, &j.s, target)})
	}
	for _, g := range goals {
		i := propIndex[g.p]
		if g.msg != "" {
			j.modelAt[i] = j.steps
		}
		if reported[i] {
			j.monitorAt[i] = j.steps
		}
		switch {
		case g.msg != "" && !reported[i]:
			j.fail("at quiescence the model's %s fails, the monitor holds: %s", g.p, g.msg)
		case g.msg == "" && reported[i]:
			j.fail("at quiescence the monitor reports %s, the model's goal holds", g.p)
		}
	}
	return true
}

// report describes the disagreements and writes the walk as a scenario file
// (testdata format, so it can be replayed with TestScenarios) into a new
// temporary directory, whose path it names.
func (j *judge) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# A walk on which the model's predicates and the spec monitors disagree:\n# %s\n\nnew config=%s",
		strings.Join(j.problems, "\n# "), j.cfg.Name)
	for _, bug := range j.cfg.Bugs.Names() {
		b.WriteString(" bug=" + bug)
	}
	fmt.Fprintf(&b, "\n----\n\ndo\n%s\n----\n", strings.Join(j.actions, "\n"))
	where := "(could not write the scenario file)"
	if dir, err := os.MkdirTemp("", "cdcspec-agree-"); err == nil {
		path := filepath.Join(dir, "disagreement.txt")
		if os.WriteFile(path, []byte(b.String()), 0o644) == nil {
			where = "scenario written to " + path
		}
	}
	return strings.Join(j.problems, "\n") + "\n" + where + "\nthe walk (" + j.cfg.String() + "):\n  " + strings.Join(j.actions, "\n  ")
}

// --- walks ---

// agreeStats counts, per property, the walks that judged it and the walks
// in which both sides saw it violated.
type agreeStats struct {
	walks, violating [32]int
	errUnjudged      int // drops the monitor could not judge: no accepted status followed
	noQuiesce        int // fair schedules that hit their bound
	maxErrLag        int
}

func (st *agreeStats) add(j *judge, livenessJudged bool) {
	for i, in := range spec.Properties() {
		live := in.Class == spec.Liveness
		if live && !livenessJudged {
			continue
		}
		if in.Name == spec.ErrorNeverDropped && j.errPending() {
			st.errUnjudged++
			continue
		}
		st.walks[i]++
		if j.modelAt[i] != 0 && j.monitorAt[i] != 0 {
			st.violating[i]++
		}
	}
	st.maxErrLag = max(st.maxErrLag, j.errLag)
	if j.noQuiesce {
		st.noQuiesce++
	}
}

// walk runs a random walk of at most depth steps after the given prefix,
// then the fair schedule, judging every step.
func walk(cfg *Config, r *rand.Rand, prefix []Action, depth int) (*judge, bool) {
	j := newJudge(cfg)
	for _, a := range prefix {
		// A bug's story replayed with the fix stops where the fix does
		// not take the next step (the scenario file's fixed run does too).
		if j.stopped || !enabled(cfg, &j.s, a) {
			break
		}
		j.do(a)
	}
	for d := 0; d < depth && !j.stopped && !j.errPending(); d++ {
		acts := Actions(*cfg, j.s)
		if len(acts) == 0 {
			break
		}
		j.do(acts[r.IntN(len(acts))])
	}
	if j.stopped {
		return j, false
	}
	return j, j.settle()
}

// storyActions returns the first run of a bug's scenario file: the
// catalogued counterexample with the bug switched on.
func storyActions(t *testing.T, path string) []Action {
	runs := storyRuns(t, path)
	require.NotEmpty(t, runs, path)
	return runs[0].actions
}

// combo is a configuration the walks run in: a standard configuration with
// no bug or one catalogued bug, optionally starting from a counterexample.
type combo struct {
	cfg    Config
	bug    string
	prefix []Action // a counterexample story, if the walks start from it
}

// agreeCombos: every standard configuration with no bug and with each
// catalogued bug, plus each bug's counterexample with the bug and without.
func agreeCombos(t *testing.T) []combo {
	var combos []combo
	for _, name := range StandardNames() {
		base, _ := Standard(name)
		bugs := []string{""}
		for _, bn := range bugNamesOf() {
			if bn == "move-final-stopped-rejected" && base.MaintMoves == 0 {
				continue // its switch acts only on a maintainer move
			}
			if bk := barrierOf(&base); bn == "new-table-scheduled-at-selection" && (bk == nil || !bk.add) {
				continue // its switch acts only on a DDL that adds a table
			}
			bugs = append(bugs, bn)
		}
		if base.FastFails+base.ClientOps+base.CoordFailovers+base.Restarts+base.Splits+base.MaintMoves+base.ErrorStuckRestarts > 0 {
			// The lifecycle configurations (lifecycle.go, error-stuck among
			// them), the restart ones,
			// the split one (split.go) and maintainer-move with no bug and
			// with the entries they expose, so that the other configurations
			// keep their share of the walks.
			bugs = []string{""}
			for _, b := range bugNamesOf() {
				if BugConfig(b) == name {
					bugs = append(bugs, b)
				}
			}
		}
		for _, b := range bugs {
			if bc, _ := Standard(BugConfig(b)); b != "" && bc.Splits > 0 && base.Splits == 0 {
				continue // a split bug's switch does nothing without splits
			}
			combos = append(combos, combo{cfg: withBug(t, base, b), bug: b})
		}
	}
	for _, b := range modelBugs() {
		base, _ := Standard(BugConfig(b.Name))
		on := withBug(t, base, b.Name)
		story := storyActions(t, filepath.Join("testdata", "bug_"+b.Name+".txt"))
		combos = append(combos, combo{cfg: on, bug: b.Name, prefix: story}, combo{cfg: base, prefix: story})
	}
	return combos
}

// weight: walks from a counterexample count three times, they reach the
// deep bugs (liveness ones especially, which a walk from Init rarely does).
func (c combo) weight() int { return 1 + 2*min(len(c.prefix), 1) }

// walkCombos runs about total walks over the combos (seeded by the combo's
// index and seed) and calls fn with each finished walk.
func walkCombos(combos []combo, total int, seed uint64, fn func(c *combo, walk int, j *judge, liveness bool)) int {
	units := 0
	for _, c := range combos {
		units += c.weight()
	}
	perUnit := (total + units - 1) / units
	walks := 0
	for ci := range combos {
		c := &combos[ci]
		r := rand.New(rand.NewPCG(uint64(ci), seed))
		for w := 0; w < perUnit*c.weight(); w++ {
			walks++
			var prefix []Action
			depth := 10 + r.IntN(30)
			if c.prefix != nil {
				// From the last third of the counterexample, a short detour.
				n := len(c.prefix)
				prefix = c.prefix[:2*n/3+r.IntN(n-2*n/3+1)]
				depth = r.IntN(10)
			}
			j, live := walk(&c.cfg, r, prefix, depth)
			fn(c, w, j, live)
		}
	}
	return walks
}

// TestPredicatesAgreeWithMonitors runs random walks over every standard
// configuration with no bug and with each catalogued bug, plus walks that
// start from the last third of each bug's counterexample, and checks the
// model's predicates against the spec monitors on every step.
//
// checkpoint-monotonic and single-maintainer-generation: no catalogued bug
// and no reachable model state breaks them, so the walks show only that
// neither side fires without the other; the firing side is shown by
// testdata/prop_*.txt (predicates, on planted states) and
// spec/monitors_test.go (monitors).
func TestPredicatesAgreeWithMonitors(t *testing.T) {
	total := *agreeWalks
	if total == 0 {
		total = 18000 // every-span-replicated needs total/900 violating walks (20 of 18,000; the walks are shared by 19 configurations and their bugs)
		if *long {
			total = 120000
		}
		if raceEnabled {
			total = 1200
		}
	}
	var st agreeStats
	disagree := map[string]int{}
	walks := walkCombos(agreeCombos(t), total, 0x5eed, func(c *combo, w int, j *judge, live bool) {
		if len(j.problems) == 0 {
			st.add(j, live)
			return
		}
		key := j.problems[0]
		if i := strings.Index(key, ": "); i >= 0 {
			key = key[i+2:]
		}
		key = fmt.Sprintf("[bug %q] %.90s", c.bug, key)
		if disagree[key] == 0 {
			t.Errorf("walk %d (config %s, bug %q): the model's predicates and the spec monitors disagree:\n%s", w, c.cfg.Name, c.bug, j.report())
		}
		disagree[key]++
	})
	for k, n := range disagree {
		t.Logf("%6d walks: %s", n, k)
	}
	var rows []string
	for i, in := range spec.Properties() {
		rows = append(rows, fmt.Sprintf("%-32s %7d walks judged, %6d with a violation", in.Name, st.walks[i], st.violating[i]))
		assert.GreaterOrEqual(t, st.walks[i], total*5/6, "%s: too few judged walks", in.Name)
	}
	t.Logf("%d walks:\n%s\nerror-never-dropped: %d drops the monitor could not judge, longest lag %d steps; %d fair schedules did not quiesce",
		walks, strings.Join(rows, "\n"), st.errUnjudged, st.maxErrLag, st.noQuiesce)
	// Both directions are exercised: each property a catalogued bug breaks
	// has walks in which the model and the monitor both saw it violated.
	for _, b := range modelBugs() {
		i := propIndex[b.PropertyInModel()]
		assert.GreaterOrEqual(t, st.violating[i], total/900, "%s (broken by %s): too few violating walks", b.PropertyInModel(), b.Name)
	}
	assert.LessOrEqual(t, st.errUnjudged*10, st.violating[propIndex[spec.ErrorNeverDropped]], "too many drops the monitor could not judge")
	assert.LessOrEqual(t, st.noQuiesce*100, walks, "too many fair schedules hit their bound")
}

func bugNamesOf() []string {
	var out []string
	for _, b := range modelBugs() {
		out = append(out, b.Name)
	}
	return out
}

// modelBugs: the catalogue entries the model can express.
func modelBugs() []spec.Bug {
	var out []spec.Bug
	for _, b := range spec.Bugs() {
		if b.ModelGap == "" {
			out = append(out, b)
		}
	}
	return out
}

// TestPredicatesAgreeOnCounterexamples replays every scenario file's action
// blocks (each catalogued bug's counterexample with the bug on and with the
// fix, and the prop_ stories), then the fair schedule, through the judge; the
// bug's property is violated on both sides with the bug on and on neither
// with the fix.
func TestPredicatesAgreeOnCounterexamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			var bug spec.Bug
			if name, ok := strings.CutPrefix(strings.TrimSuffix(filepath.Base(path), ".txt"), "bug_"); ok {
				bug, ok = spec.LookupBug(name)
				require.True(t, ok, "no catalogued bug %q", name)
			}
			runs := storyRuns(t, path)
			if len(runs) == 0 && bug.Name == "" && !strings.HasPrefix(filepath.Base(path), "prop_") {
				t.Skip("no action story in this file (it drives the search)")
			}
			require.NotEmpty(t, runs)
			for _, run := range runs {
				j := newJudge(&run.cfg)
				for _, a := range run.actions {
					j.do(a)
				}
				if !j.stopped {
					j.settle()
				}
				if len(j.problems) > 0 {
					// report writes a scenario file: only for a real disagreement.
					require.Fail(t, "disagreement", "%s (%s):\n%s", path, run.cfg.String(), j.report())
				}
				if bug.Name == "" {
					continue
				}
				i := propIndex[bug.PropertyInModel()]
				if run.cfg.Bugs != 0 {
					if j.stopped && j.modelAt[i] == 0 && livenessClass(bug.PropertyInModel()) {
						// A safety property broke on the way to
						// quiescence and ended the judged run before the
						// liveness goal could be judged; the checker
						// reports the goal, as it prefers a goal missed
						// at quiescence (split-double-add: the second
						// dispatcher of the span stays). Both sides must
						// have seen that safety violation.
						both := false
						for k, p := range spec.Properties() {
							both = both || (!livenessClass(p.Name) && j.modelAt[k] != 0 && j.monitorAt[k] != 0)
						}
						assert.True(t, both, "%s with the bug: the judged run stopped, but no safety property fired on both sides", path)
						continue
					}
					assert.NotZero(t, j.modelAt[i], "%s with the bug: the model's %s did not fire", path, bug.PropertyInModel())
					assert.NotZero(t, j.monitorAt[i], "%s with the bug: the monitor did not report %s", path, bug.PropertyInModel())
				} else {
					assert.Zero(t, j.modelAt[i]+j.monitorAt[i], "%s with the fix: %s broke", path, bug.PropertyInModel())
				}
			}
		})
	}
}

type storyRun struct {
	cfg     Config
	actions []Action
}

// storyRuns reads a scenario file's "new" and "do" commands into runs (plant
// commands edit states directly and have no events, so they end a run). It
// reads the datadriven format itself (a command line, input lines, "----",
// expected output up to a blank line) rather than through RunTest, which
// would echo every command under -v.
func storyRuns(t *testing.T, path string) []storyRun {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var runs []storyRun
	var s State
	planted := false
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, args, err := datadriven.ParseLine(line)
		require.NoError(t, err, "%s:%d", path, i+1)
		var input []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "----"; i++ {
			input = append(input, lines[i])
		}
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		}
		switch cmd {
		case "new":
			cfg, err := parseConfig(&datadriven.TestData{Cmd: cmd, CmdArgs: args})
			require.NoError(t, err, "%s:%d", path, i+1)
			runs = append(runs, storyRun{cfg: cfg})
			s = Init(&runs[len(runs)-1].cfg)
			planted = false
		case "plant":
			planted = true
		case "do":
			require.NotEmpty(t, runs, "%s: do before new", path)
			r := &runs[len(runs)-1]
			if planted {
				break
			}
			for _, l := range input {
				if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
					continue
				}
				a, err := parseAction(&s, l)
				require.NoError(t, err, "%s: %q", path, l)
				r.actions = append(r.actions, a)
				step(&r.cfg, &s, a, nil)
			}
		}
	}
	return runs
}

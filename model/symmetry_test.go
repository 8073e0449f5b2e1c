package model

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/search"
	"cdcspec/spec"
)

// TestSymmetryFieldsListed: every field of State has a role in
// symmetryRoles (what permute must do with it), and every role names a
// field. A new field fails here until symmetry.go handles it.
func TestSymmetryFieldsListed(t *testing.T) {
	seen := map[string]bool{}
	var walk func(tp reflect.Type, path string)
	walk = func(tp reflect.Type, path string) {
		role, listed := symmetryRoles[path]
		if listed {
			seen[path] = true
		}
		switch tp.Kind() {
		case reflect.Struct:
			if listed && role != roleMsg {
				t.Errorf("%s: a struct has no role of its own; list its fields", path)
			}
			if role == roleMsg {
				return // perm.msg maps messages by kind
			}
			for i := 0; i < tp.NumField(); i++ {
				f := tp.Field(i)
				p := f.Name
				if path != "" {
					p = path + "." + f.Name
				}
				walk(f.Type, p)
			}
		case reflect.Array:
			if listed && role != roleSlotArray && role != roleTableArray {
				t.Errorf("%s: an array is a slot-array, a table-array, or lists its elements", path)
			}
			if k := tp.Elem().Kind(); listed && k != reflect.Struct && k != reflect.Array {
				return // an array of plain values, moved whole
			}
			walk(tp.Elem(), path+"[]")
		default:
			if !listed {
				t.Errorf("State field %s has no symmetry role: say in model/symmetry.go (symmetryRoles, permute) whether it names a node slot, an identity or a table", path)
			}
		}
	}
	walk(reflect.TypeFor[State](), "")
	for p := range symmetryRoles {
		if !seen[p] {
			t.Errorf("symmetryRoles lists %s, which is no State field", p)
		}
	}
}

// symCfg is a symmetric configuration with every kind of step: three
// nodes, two tables at creation and one by DDL, moves, and one of each
// fault.
func symCfg() Config {
	c := Base()
	c.Name = "symmetric"
	c.Nodes, c.Tables, c.DDLTables, c.TsMax = 3, 2, 1, 3
	c.Crashes, c.Restarts, c.Drops, c.Dups, c.SinkErrors, c.Stalls = 1, 1, 1, 1, 1, 1
	c.SpanMoves = true
	return c
}

func actionSet(as []Action) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	sort.Strings(out)
	return out
}

// TestSymmetryCommutes: on the states of random walks, every permutation g
// of the group maps the enabled actions of s to those of g(s), the
// successor by a to the successor of g(s) by g(a), and keeps the safety
// verdict of every step and the liveness verdict of the fair schedule's
// goals. This is what makes the reduction sound.
func TestSymmetryCommutes(t *testing.T) {
	lifecycle := func() Config {
		c := symCfg()
		c.FastFails, c.ClientOps, c.CoordFailovers = 1, 2, 1
		return c
	}
	barrier := func(kind string) Config {
		c := symCfg()
		c.Barrier, c.DDLTables = kind, 0
		return c
	}
	maintMove := func() Config {
		c := symCfg()
		c.MaintMoves, c.CoordFailovers, c.SinkErrors = 2, 1, 1
		return c
	}
	for _, cfg := range []Config{symCfg(), func() Config { c := symCfg(); c.Puller = true; return c }(), lifecycle(),
		barrier("syncpoint"), barrier("normal"), barrier("truncate"), maintMove()} {
		sy := newSymmetry(&cfg)
		require.Len(t, sy.group, 2, "2 interchangeable slots")
		r := rand.New(rand.NewPCG(7, 11))
		steps := 0
		for walk := 0; walk < 60; walk++ {
			s := Init(&cfg)
			for d := 0; d < 40; d++ {
				acts := appendActions(&cfg, &s, nil, true)
				if len(acts) == 0 {
					break
				}
				for gi := 1; gi < len(sy.group); gi++ {
					g := &sy.group[gi]
					gs := permute(&s, g)
					var mapped []Action
					for _, a := range acts {
						mapped = append(mapped, g.action(a))
					}
					require.Equal(t, actionSet(mapped), actionSet(appendActions(&cfg, &gs, nil, true)), "actions of g(s), g=%v\n%s", *g, s.String())
					for _, a := range acts {
						next := s
						step(&cfg, &next, a, nil)
						gnext := gs
						step(&cfg, &gnext, g.action(a), nil)
						want := permute(&next, g)
						require.Equal(t, want, gnext, "g(step(s, %s)) != step(g(s), g(a)), g=%v\n%s", a, *g, s.String())
						i1, _ := checkSafetyIndex(&cfg, &s, &next)
						i2, _ := checkSafetyIndex(&cfg, &gs, &gnext)
						require.Equal(t, i1, i2, "safety verdict of %s under g=%v", a, *g)
						g1, _ := checkGoals(&cfg, &s, &next)
						g2, _ := checkGoals(&cfg, &gs, &gnext)
						require.Equal(t, g1, g2, "goals after %s under g=%v", a, *g)
						steps++
					}
				}
				step(&cfg, &s, acts[r.IntN(len(acts))], nil)
			}
		}
		t.Logf("%s puller=%v: %d permuted steps checked", cfg.Name, cfg.Puller, steps)
	}
}

// TestSymmetryRepresentative: every member of an orbit has the same
// representative, and UnpermuteAction inverts the permutation.
func TestSymmetryRepresentative(t *testing.T) {
	cfg := symCfg()
	sys := newSystem(&cfg)
	r := rand.New(rand.NewPCG(3, 5))
	for walk := 0; walk < 100; walk++ {
		s := Init(&cfg)
		for d := 0; d < 30; d++ {
			acts := appendActions(&cfg, &s, nil, true)
			if len(acts) == 0 {
				break
			}
			rep := s
			p := sys.Represent(&rep)
			for gi := range sys.sym.group {
				gs := permute(&s, &sys.sym.group[gi])
				sys.Represent(&gs)
				require.Equal(t, rep, gs, "orbit members with different representatives")
			}
			for _, a := range acts {
				ra := sys.sym.group[p].action(a)
				assert.Equal(t, a, sys.UnpermuteAction(p, ra))
			}
			step(&cfg, &s, acts[r.IntN(len(acts))], nil)
		}
	}
}

// orbits counts the distinct states a plain BFS reaches within depth and
// their distinct representatives. The initial state is its own image
// under every permutation, so an orbit's members all lie at the same
// depth and a depth bound cuts whole orbits.
func orbits(cfg Config, depth int) (states, reps int) {
	sys := newSystem(&cfg)
	seen := map[State]bool{}
	rs := map[State]bool{}
	level := []State{Init(&cfg)}
	seen[level[0]] = true
	for d := 0; len(level) > 0; d++ {
		var next []State
		for _, s := range level {
			rep := s
			sys.Represent(&rep)
			rs[rep] = true
			if s.Overflow || d == depth {
				continue
			}
			for _, a := range appendActions(&cfg, &s, nil, true) {
				n := s
				step(&cfg, &n, a, nil)
				if !seen[n] {
					seen[n] = true
					next = append(next, n)
				}
			}
		}
		level = next
	}
	return len(seen), len(rs)
}

// TestSymmetryReduction: on a symmetric configuration the reduced search
// counts exactly the orbits of the reachable states (a plain BFS and a
// count of representatives), keeps the verdict, and the unreduced search
// counts every state; the factor is close to the group's size (states with
// a nontrivial stabiliser, such as the initial one, count once in both).
func TestSymmetryReduction(t *testing.T) {
	cfg := Base()
	cfg.Name = "three-nodes"
	cfg.Nodes, cfg.TsMax, cfg.Crashes = 3, 2, 1
	const depth = 11
	states, reps := orbits(cfg, depth)
	full, err := Check(cfg, search.Bounds{SafetyOnly: true, NoSymmetry: true, MaxDepth: depth}, nil)
	require.NoError(t, err)
	red, err := Check(cfg, search.Bounds{SafetyOnly: true, MaxDepth: depth}, nil)
	require.NoError(t, err)
	assert.Equal(t, search.BoundReached, full.Outcome)
	assert.Equal(t, search.BoundReached, red.Outcome)
	assert.Equal(t, int64(states), full.Distinct)
	assert.Equal(t, int64(reps), red.Distinct)
	assert.Equal(t, 2, red.Symmetry)
	f := float64(full.Distinct) / float64(red.Distinct)
	assert.Greater(t, f, 1.6, "two interchangeable slots: a factor near 2")
	assert.LessOrEqual(t, f, 2.0)
	t.Logf("%s to depth %d: %d states, %d orbits, factor %.3f", cfg.Name, depth, full.Distinct, red.Distinct, f)

	// With liveness, no violation either way.
	for _, nosym := range []bool{false, true} {
		lr, err := Check(cfg, search.Bounds{MaxDepth: depth - 3, NoSymmetry: nosym}, nil)
		require.NoError(t, err)
		assert.Equal(t, search.BoundReached, lr.Outcome, lr.Reason)
	}
}

// TestSymmetryKeepsBugVerdicts: each catalogued bug in its configuration
// grown to three nodes (so that two slots are interchangeable) is found
// with and without the reduction, as a violation of the same property with
// a story of the same length, told in names the unreduced model replays.
// The standard configurations themselves have a group of one (two nodes,
// at most one table at creation): reduction changes nothing there.
func TestSymmetryKeepsBugVerdicts(t *testing.T) {
	for _, name := range StandardNames() {
		cfg, _ := Standard(name)
		assert.Equal(t, 1, newSystem(&cfg).SymmetryGroup(), "%s: the standard configurations are not symmetric", name)
	}
	if raceEnabled {
		t.Skip("too slow under -race")
	}
	for _, b := range spec.Bugs() {
		if b.ModelGap != "" {
			continue
		}
		cfgName := BugConfig(b.Name)
		quick := b.ID == spec.BugAddAcceptsUnbootstrappedMaintainer || b.ID == spec.BugStuckAfterUpstreamFailure
		if !*long && !quick {
			continue // -long: every bug (minutes each on three nodes)
		}
		t.Run(b.Name, func(t *testing.T) {
			cfg, _ := Standard(cfgName)
			cfg.Nodes = 3
			cfg.Bugs = spec.BugSet(0).With(b.ID)
			var res [2]Result
			for i, nosym := range []bool{false, true} {
				r, err := Check(cfg, search.Bounds{NoSymmetry: nosym, MaxStates: 3000000}, nil)
				require.NoError(t, err)
				require.Equal(t, search.Violation, r.Outcome, "symmetry off=%v: %s", nosym, r.Reason)
				require.Equal(t, b.PropertyInModel(), r.Violation.Property)
				states, _, err := Replay(cfg, r.Violation.Actions())
				require.NoError(t, err, "the story replays on the unreduced model")
				require.Equal(t, r.Violation.Final, states[len(states)-1])
				res[i] = r
			}
			assert.Equal(t, len(res[1].Violation.Steps), len(res[0].Violation.Steps), "story length")
			assert.Equal(t, prefixLen(res[1].Violation), prefixLen(res[0].Violation), "steps before faults heal")
			t.Logf("%s (3 nodes): %d steps; %d states reduced, %d unreduced", b.Name, len(res[0].Violation.Steps), res[0].Distinct, res[1].Distinct)
		})
	}
}

package model

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/search"
)

// TestMutationTable checks the table itself (part of make test): names are
// unique, every guard has one row, every row names standard configurations
// or says why nothing catches it, and the CLI's names parse.
func TestMutationTable(t *testing.T) {
	seen := map[string]bool{}
	guardsSeen := map[Mutation]bool{}
	for _, mi := range Mutations() {
		require.False(t, seen[mi.Name], "duplicate mutation %s", mi.Name)
		seen[mi.Name] = true
		require.NotEmpty(t, mi.Cites, "%s cites nothing", mi.Name)
		require.True(t, len(mi.Configs) > 0 || mi.Redundant != "", "%s: no configuration and no reason", mi.Name)
		for _, c := range mi.Configs {
			_, ok := Standard(c)
			require.True(t, ok, "%s: configuration %q is not standard", mi.Name, c)
		}
		if mi.Kind == MutKindGuard {
			guardsSeen[mi.M] = true
			m, err := ParseMutation(mi.Name)
			require.NoError(t, err)
			require.Equal(t, mi.M, m)
		}
	}
	for m := Mutation(1); m < mutLimit; m++ {
		require.True(t, guardsSeen[m], "guard %d has no row in the mutation table", m)
	}
	_, err := ParseMutation("no-such-guard")
	require.ErrorContains(t, err, "known:")
}

// checkWithin checks cfg as `cdcspec check --config` does: exhaustively
// within maxStates, or by the configuration's random walks (Config.Walks)
// with seed 1 when it names them.
func checkWithin(cfg Config, maxStates int) (Result, error) {
	if cfg.Walks > 0 {
		return Simulate(cfg, search.Bounds{}, search.Walks{Seed: 1, Count: cfg.Walks, Depth: cfg.WalkDepth})
	}
	return Check(cfg, search.Bounds{MaxStates: maxStates}, nil)
}

// mutationCommand is the cdcspec check command that reproduces one row.
func mutationCommand(mi MutationInfo, config string) string {
	switch mi.Kind {
	case MutKindFeature:
		for _, f := range featureNames {
			if f.f == mi.F {
				return fmt.Sprintf("cdcspec check --config %s --without %s", config, f.name)
			}
		}
	case MutKindBug:
		return fmt.Sprintf("cdcspec check --config %s --bug %s", config, mi.Bug)
	}
	return fmt.Sprintf("cdcspec check --config %s --mutate %s", config, mi.Name)
}

// TestMutations is `make mutate`: every row of the mutation table switched
// off alone (a guard off, a feature off, a catalogue entry on) and checked
// in its configurations, in order, each within the state budget
// (CDCSPEC_MUTATE_STATES, default 500,000; a catalogue entry's row gets
// CDCSPEC_MUTATE_BUG_STATES, default 3,000,000, since some entries need
// millions of states: the README's table). A row is caught when a check
// ends in a violation; a row that is not caught must carry its Redundant
// reason, and a row with a reason must not be caught (the reason would be
// stale). CDCSPEC_MUTATE_ONLY=NAME[,NAME] restricts the run.
func TestMutations(t *testing.T) {
	if os.Getenv("CDCSPEC_MUTATE") == "" {
		t.Skip("set CDCSPEC_MUTATE=1 (make mutate)")
	}
	envInt := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		require.NoError(t, err, name)
		require.Positive(t, n, name)
		return n
	}
	budget := envInt("CDCSPEC_MUTATE_STATES", 500_000)
	bugBudget := envInt("CDCSPEC_MUTATE_BUG_STATES", 3_000_000)
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("CDCSPEC_MUTATE_ONLY"), ",") {
		if n != "" {
			only[n] = true
		}
	}
	// Every configuration a row names must hold without the mutation (to a
	// bound): a violation there would count every row as caught.
	baseline := map[string]bool{}
	for _, mi := range Mutations() {
		for _, c := range mi.Configs {
			if baseline[c] || (len(only) > 0 && !only[mi.Name]) {
				continue
			}
			baseline[c] = true
			cfg, _ := Standard(c)
			r, err := checkWithin(cfg, 100_000)
			require.NoError(t, err, c)
			if r.Outcome == search.Violation {
				t.Fatalf("configuration %s is violated without any mutation: %s", c, r.Violation.Property)
			}
		}
	}
	var caught, redundant, surviving int
	var table strings.Builder
	fmt.Fprintf(&table, "| mutation | cites | outcome | configuration | property | states | command |\n|---|---|---|---|---|---|---|\n")
	for _, mi := range Mutations() {
		if len(only) > 0 && !only[mi.Name] {
			continue
		}
		outcome, config, prop, states := "surviving", "", "", int64(0)
		for _, c := range mi.Configs {
			cfg, _ := Standard(c)
			mi.Apply(&cfg)
			b := budget
			if mi.Kind == MutKindBug {
				b = bugBudget
			}
			b = max(b, mi.States)
			r, err := checkWithin(cfg, b)
			require.NoError(t, err, mi.Name)
			config, states = c, r.Distinct
			if r.Outcome == search.Violation {
				outcome, prop = "caught", string(r.Violation.Property)
				break
			}
			if r.Outcome == search.BoundReached {
				outcome = "surviving (bound reached)"
			}
		}
		switch {
		case outcome == "caught":
			caught++
			if mi.Redundant != "" {
				t.Errorf("%s is documented redundant (%s) but %s catches it: %s", mi.Name, mi.Redundant, config, prop)
			}
		case mi.Redundant != "":
			redundant++
			outcome = "redundant: " + mi.Redundant
		default:
			surviving++
			t.Errorf("%s (%s) survives in %v and has no documented reason", mi.Name, mi.Cites, mi.Configs)
		}
		cmd := ""
		if config != "" {
			cmd = "`" + mutationCommand(mi, config) + "`"
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s | %s | %d | %s |\n", mi.Name, mi.Cites, outcome, config, prop, states, cmd)
		t.Logf("%s: %s %s %s (%d states)", mi.Name, outcome, config, prop, states)
	}
	t.Logf("mutation score: %d caught, %d redundant, %d surviving\n%s", caught, redundant, surviving, table.String())
}

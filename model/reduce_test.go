package model

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/search"
	"cdcspec/spec"
)

// oracleRow is one row of the delay-bound soundness oracle: the unreduced
// search and the deepening delay-bounded one of a configuration.
type oracleRow struct {
	name        string
	full, delay Result
	tries       int
}

func (r oracleRow) verdict(res Result) string {
	switch {
	case res.Outcome == search.Violation:
		return "violation " + string(res.Violation.Property)
	case res.Outcome == search.OK:
		return "ok"
	}
	if k, ok := res.CompleteUpToDelays(); ok {
		return fmt.Sprintf("complete up to %d delays", k)
	}
	return "incomplete"
}

// delayOracle checks cfg unreduced (within states) and by deepening
// delay-bounded searches (search.CheckDelays within budget, each search
// within states), and fails the test when the two disagree where they
// can be compared:
//
//   - soundness: a violation of the delay-bounded search replays on the
//     model (Replay) and, for a safety property, one of its steps violates
//     that property; a configuration the unreduced search proves correct
//     (ok) has no violation within any delay bound;
//   - the same verdict: a violation the unreduced search finds, the delay
//     searches find within the budget, of the same property.
func delayOracle(t *testing.T, name string, cfg Config, states int, budget time.Duration) oracleRow {
	t.Helper()
	row := oracleRow{name: name}
	var err error
	row.full, err = Check(cfg, search.Bounds{MaxStates: states}, nil)
	require.NoError(t, err, name)
	var tries []search.Stats
	row.delay, tries, err = CheckDelays(cfg, search.Bounds{MaxStates: states}, budget, nil)
	require.NoError(t, err, name)
	row.tries = len(tries)
	if v := row.delay.Violation; v != nil {
		var acts []Action
		for _, st := range v.Steps {
			if st.Action.Kind != aNone { // not the heal marker of a fair schedule
				acts = append(acts, st.Action)
			}
		}
		sts, _, err := Replay(cfg, acts)
		require.NoError(t, err, "%s: the delay-bounded counterexample replays", name)
		if !isLiveness(v.Property) {
			// The violating step ends the path, or lies inside a fair
			// schedule (a safety property broken while settling).
			broken := false
			for i := 1; i < len(sts) && !broken; i++ {
				j, _ := checkSafetyIndex(&cfg, &sts[i-1], &sts[i])
				broken = j >= 0 && safetyNames[j] == v.Property
			}
			require.True(t, broken, "%s: a replayed step violates %s", name, v.Property)
		}
		require.NotEqual(t, search.OK, row.full.Outcome, "%s: the unreduced search proves it correct, the delay-bounded one finds %s", name, v.Property)
	}
	if row.full.Outcome == search.Violation {
		require.Equal(t, row.verdict(row.full), row.verdict(row.delay),
			"%s: the unreduced search finds a violation; the delay searches (%d, up to k=%d within %s) must find the same",
			name, row.tries, row.delay.DelayBound, budget)
	}
	return row
}

func isLiveness(p spec.Property) bool {
	for _, q := range livenessNames {
		if q == p {
			return true
		}
	}
	return false
}

// TestDelayBoundOracleQuick: the oracle on three catalogued bugs whose
// unreduced searches take about a second.
func TestDelayBoundOracleQuick(t *testing.T) {
	for _, b := range []string{"add-accepts-unbootstrapped-maintainer", "trigger-passes-add-table-ddl", "watermark-seq-rejects-lower-checkpoint"} {
		e, _ := spec.LookupBug(b)
		cfg, _ := Standard(BugConfig(b))
		cfg.Bugs = cfg.Bugs.With(e.ID)
		row := delayOracle(t, b, cfg, 500_000, time.Minute)
		require.Equal(t, search.Violation, row.delay.Outcome, b)
	}
}

// TestDelayBoundOracle is `make oracle`: the oracle on every standard
// configuration with the fixes on and on every row of the mutation table
// (its first configuration), each search within CDCSPEC_ORACLE_STATES
// states (default 500,000; a row's own budget when higher) and the delay
// searches within CDCSPEC_ORACLE_TIME (default 60s) a row. It prints the
// table: both verdicts, the largest delay bound that completed (or the one
// that found the violation) and the states of each.
// CDCSPEC_ORACLE_ONLY=NAME[,NAME] restricts the run.
func TestDelayBoundOracle(t *testing.T) {
	if os.Getenv("CDCSPEC_ORACLE") == "" {
		t.Skip("set CDCSPEC_ORACLE=1 (make oracle)")
	}
	states := 500_000
	if v := os.Getenv("CDCSPEC_ORACLE_STATES"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "CDCSPEC_ORACLE_STATES")
		require.Positive(t, n, "CDCSPEC_ORACLE_STATES")
		states = n
	}
	budget := time.Minute
	if v := os.Getenv("CDCSPEC_ORACLE_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "CDCSPEC_ORACLE_TIME")
		require.Positive(t, d, "CDCSPEC_ORACLE_TIME")
		budget = d
	}
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("CDCSPEC_ORACLE_ONLY"), ",") {
		if n != "" {
			only[n] = true
		}
	}
	type job struct {
		name   string
		cfg    Config
		states int
	}
	var jobs []job
	for _, n := range StandardNames() {
		cfg, _ := Standard(n)
		if cfg.Walks > 0 {
			continue // random walks only: no exhaustive verdict to compare
		}
		jobs = append(jobs, job{n, cfg, states})
	}
	for _, mi := range Mutations() {
		if len(mi.Configs) == 0 {
			continue
		}
		cfg, _ := Standard(mi.Configs[0])
		if cfg.Walks > 0 {
			continue
		}
		mi.Apply(&cfg)
		jobs = append(jobs, job{mi.Name + "@" + mi.Configs[0], cfg, max(states, mi.States)})
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| row | unreduced | states | delay-bounded | k | states | searches |\n|---|---|---|---|---|---|---|\n")
	for _, j := range jobs {
		if len(only) > 0 && !only[j.name] {
			continue
		}
		t.Run(j.name, func(t *testing.T) {
			row := delayOracle(t, j.name, j.cfg, j.states, budget)
			fmt.Fprintf(&table, "| %s | %s | %d | %s | %d | %d | %d |\n", j.name, row.verdict(row.full), row.full.Distinct,
				row.verdict(row.delay), row.delay.DelayBound, row.delay.Distinct, row.tries)
			t.Logf("%s: unreduced %s (%d states), delay-bounded %s (k=%d, %d states)", j.name, row.verdict(row.full), row.full.Distinct,
				row.verdict(row.delay), row.delay.DelayBound, row.delay.Distinct)
		})
	}
	t.Logf("delay-bound oracle:\n%s", table.String())
}

package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"cdcspec/impl/core"
)

// soakSeeds is 200 by default (20 under the race detector); set
// CDCSPEC_SOAK_SEEDS for longer runs, CDCSPEC_SOAK_FROM for the first seed.
func soakSeeds() (from, n int) {
	n = 200
	if raceEnabled {
		n = 20
	}
	if v, err := strconv.Atoi(os.Getenv("CDCSPEC_SOAK_SEEDS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("CDCSPEC_SOAK_FROM")); err == nil && v >= 0 {
		from = v
	}
	return from, n
}

// TestSoak: random faults with every fix on. Each run ends with faults
// healed and quiescence; then every spec property holds, every table span
// has exactly one working dispatcher, and the stored checkpoint passed the
// upstream resolved ts at heal time (the last fault). A failing seed writes
// its log and the command that replays it.
func TestSoak(t *testing.T) {
	from, n := soakSeeds()
	for seed := from; seed < from+n; seed++ {
		if ok, msg := soakOnce(uint64(seed), nil); !ok {
			var log bytes.Buffer
			soakOnce(uint64(seed), &log)
			dir := t.TempDir()
			if d := os.Getenv("CDCSPEC_ARTIFACTS"); d != "" {
				dir = d
			}
			path := filepath.Join(dir, fmt.Sprintf("soak-seed-%d.log", seed))
			_ = os.WriteFile(path, log.Bytes(), 0o644)
			t.Fatalf("seed %d: %s\nlog: %s\nreplay: CDCSPEC_SOAK_FROM=%d CDCSPEC_SOAK_SEEDS=1 go test ./impl/sim -run TestSoak -v", seed, msg, path, seed)
		}
	}
	t.Logf("%d seeds from %d: faults healed, quiesced, every property held, every span tiled, checkpoint past the heal target", n, from)
}

// soakOnce runs one seed: setup, ~60 s of random actions and faults, heal,
// quiesce. It returns false with a reason on any violation or if the
// cluster did not converge.
func soakOnce(seed uint64, log *bytes.Buffer) (bool, string) {
	cfg := Config{Seed: seed, Nodes: 3, Tables: 3 + int(seed%4)}
	if log != nil {
		cfg.Log = log
		cfg.LogLevel = "debug"
	}
	s := New(cfg)
	r := rand.New(rand.NewPCG(seed, 0x736f616b))
	feeds := []string{"cf1"}
	if seed%3 == 0 {
		feeds = append(feeds, "cf2")
	}
	for _, f := range feeds {
		if err := s.CreateChangefeed(f); err != nil {
			return false, "create: " + err.Error()
		}
	}
	s.RunFor(3000)
	stalled, paused := false, map[string]bool{}
	for step := 0; step < 40; step++ {
		RandomAction(s, r, feeds, &stalled, paused)
		s.RunFor(500 + r.Int64N(2500))
	}
	for f := range paused {
		_ = s.ResumeChangefeed(f, 0)
	}
	s.Heal()
	ok, why := s.RunUntilQuiet(240_000)
	if log != nil {
		st := s.State()
		fmt.Fprintf(log, "=== final state (owner %s)\n", st.Owner)
		for _, cf := range st.Changefeeds {
			fmt.Fprintf(log, "%+v\n", cf)
		}
		for _, n := range st.Nodes {
			fmt.Fprintf(log, "node %s maintainers %+v\n", n.ID, n.Maintainers)
			for _, m := range n.Maintainers {
				if mt := s.Capture(n.ID).Maintainers.Get(m.Changefeed); mt != nil {
					for _, sp := range mt.Spans() {
						fmt.Fprintf(log, "  span %+v\n", sp)
					}
				}
			}
			for _, m := range n.Managers {
				fmt.Fprintf(log, "  dm %+v\n", m)
			}
			for _, d := range n.Dispatchers {
				fmt.Fprintf(log, "  %s %s %s %d %v\n", d.Changefeed, d.Span, d.State, d.Checkpoint, d.PendingDDLs)
			}
		}
		for _, v := range s.Violations() {
			fmt.Fprintf(log, "violation: %s\n", v)
		}
	}
	if vs := s.Violations(); len(vs) > 0 {
		return false, fmt.Sprintf("%d violation(s), first: %s", len(vs), vs[0])
	}
	if !ok {
		return false, "did not converge: " + why
	}
	return true, ""
}

// RandomAction applies one random action or fault (a rapid test would draw
// the same menu).
func RandomAction(s *Sim, r *rand.Rand, feeds []string, stalled *bool, paused map[string]bool) string {
	caps := s.Captures()
	pick := func() core.NodeID { return caps[r.IntN(len(caps))] }
	f := feeds[r.IntN(len(feeds))]
	switch k := r.IntN(16); k {
	case 0:
		s.SetFaults(Faults{DropProb: r.Float64() * 0.1, DupProb: r.Float64() * 0.05, DelayMinMs: 1, DelayMaxMs: 1 + r.Int64N(100)})
		return "faults"
	case 1:
		if len(caps) > 2 {
			a := pick()
			s.Partition([]core.NodeID{a})
			return "partition"
		}
	case 2:
		s.Partition()
		s.SetFaults(Faults{DelayMinMs: 1, DelayMaxMs: 5})
		return "heal-network"
	case 3:
		if len(caps) > 2 {
			_ = s.KillCapture(pick())
			return "kill"
		}
	case 4:
		if len(caps) < 5 {
			s.AddCapture()
			return "add-capture"
		}
	case 5:
		if len(caps) > 2 {
			_ = s.ExpireSession(pick())
			return "expire"
		}
	case 6:
		_ = s.SinkError(CfID(f), pick())
		return "sink-error"
	case 7:
		if !*stalled {
			s.StallUpstream()
		} else {
			s.ResumeUpstream()
		}
		*stalled = !*stalled
		return "stall"
	case 8:
		tables := s.Upstream().Tables()
		_, _ = s.MoveTable(f, tables[r.IntN(len(tables))], pick())
		return "move-table"
	case 9:
		tables := s.Upstream().Tables()
		_, _ = s.SplitTable(f, tables[r.IntN(len(tables))])
		return "split-table"
	case 10:
		if len(s.Upstream().Tables()) < 10 {
			s.CreateTable()
			return "create-table"
		}
	case 11:
		_ = s.MoveMaintainer(f, pick())
		return "move-maintainer"
	case 12:
		if paused[f] {
			if s.ResumeChangefeed(f, 0) == nil {
				delete(paused, f)
			}
		} else if s.PauseChangefeed(f) == nil {
			paused[f] = true
		}
		return "pause-resume"
	case 13:
		_ = s.SetFailpoint(pick(), "BlockCreateDispatcher", r.IntN(2) == 0)
		return "failpoint"
	case 14:
		_ = s.SetFailpoint(pick(), "NotReadyToCloseDispatcher", r.IntN(2) == 0)
		return "failpoint"
	case 15:
		tables := s.Upstream().Tables()
		_, _ = s.RemoveTableDispatchers(f, tables[r.IntN(len(tables))])
		return "remove-table"
	}
	return "noop"
}

package sim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
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

// soakOnce runs one seed with every fix on.
func soakOnce(seed uint64, log *bytes.Buffer) (bool, string) {
	cfg := ChaosConfig{Seed: seed}
	if log != nil {
		cfg.Log, cfg.LogLevel = log, "debug"
	}
	res := RunChaos(cfg)
	if log != nil {
		res.Sim.DumpState(log)
		for _, v := range res.Violations {
			fmt.Fprintf(log, "violation: %s\n", v)
		}
	}
	if len(res.Violations) > 0 {
		return false, fmt.Sprintf("%d violation(s), first: %s", len(res.Violations), res.Violations[0])
	}
	if !res.Converged {
		return false, "did not converge: " + res.Why
	}
	return true, ""
}

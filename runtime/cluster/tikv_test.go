package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScenarioSeed9595 (CDCSPEC_LONG=1, ~1.5 min): every TiKV store fails
// for 10 s under real captures with kv-clients. With every fix on the
// checkpoint passes the heal target and nothing is lost; with
// stuck-after-upstream-failure regions stay in exited region workers and
// the trace check reports checkpoint-advances-after-heal.
func TestScenarioSeed9595(t *testing.T) {
	if os.Getenv("CDCSPEC_LONG") == "" {
		t.Skip("set CDCSPEC_LONG=1")
	}
	sc, err := LoadScenario("seed-9595")
	require.NoError(t, err)
	steps, legacy := sc.Steps, sc.RawWatermark
	for _, bug := range []string{"", "stuck-after-upstream-failure"} {
		cfg := Config{Binary: binary, LogDir: t.TempDir(), LegacyRawWatermark: legacy, Progress: testLog{t}}
		if bug != "" {
			cfg.Bugs = []string{bug}
		}
		res, err := Run(context.Background(), RunConfig{Cluster: cfg, Steps: steps, Duration: 20 * time.Second, SettleTimeout: 15 * time.Second})
		require.NoError(t, err)
		found := false
		for _, f := range res.Findings {
			found = found || (f.Property == "checkpoint-advances-after-heal" && f.Severity == "violation")
		}
		require.Len(t, res.StoreHeals, 1, "the stores came back once")
		if bug == "" {
			assert.True(t, res.OK(), "fixed run: violations=%d settle=%q findings %+v", res.Violations, res.SettleError, res.Findings)
			assert.Zero(t, res.Lost)
			assert.GreaterOrEqual(t, res.StoreHeals[0].CaughtUpMs, int64(0), "the checkpoint passes the resolved ts of the stores' return")
		} else {
			assert.True(t, found, "with %s: findings %+v", bug, res.Findings)
			assert.False(t, res.OK())
			assert.Equal(t, int64(-1), res.StoreHeals[0].CaughtUpMs, "the checkpoint never passes the stores' return")
		}
	}
}

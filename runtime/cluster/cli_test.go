package cluster

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/runtime/adminapi"
	"cdcspec/spec"
)

// cli runs `cdcspec cli ARGS --server URL` and returns its exit code and
// stdout (stderr on failure).
func cli(t *testing.T, server string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{"cli"}, args...), "--server", server)...)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(ee.Stderr)
	}
	require.NoError(t, err)
	return 0, string(out)
}

// TestCLITSORoundTrip (issue 28's acceptance) on a real cluster: the
// checkpoint `cli changefeed query` prints is a TSO; pause, then resume
// --overwrite-checkpoint-ts with that value keeps the checkpoint (it
// never goes below it, and advances); Unix milliseconds there are refused
// with exit 2 and the hint, and change nothing.
func TestCLITSORoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes, etcd and Kafka; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := Start(ctx, Config{Nodes: 1, Tables: 1, Rate: 200, Seed: 5, Binary: binary, LogDir: t.TempDir(), Progress: testLog{t}})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.WaitCheckpoint(ctx, uint64(time.Now().UnixMilli()), 30*time.Second)
	require.NoError(t, err)
	var server string
	for _, v := range c.Members() {
		server = "http://" + v.APIAddr
	}
	query := func() adminapi.ChangefeedInfo {
		code, out := cli(t, server, "changefeed", "query", "-c", "cf-1")
		require.Equal(t, 0, code, out)
		var info adminapi.ChangefeedInfo
		require.NoError(t, json.Unmarshal([]byte(out), &info), out)
		return info
	}
	before := query()
	cp := before.CheckpointTs
	require.InDelta(t, time.Now().UnixMilli(), int64(spec.PhysicalMs(cp)), 60_000, "checkpoint_ts %d is not a TSO of now", cp)
	require.Equal(t, adminapi.TSOTime(cp), before.CheckpointTime)
	t.Logf("query: checkpoint_ts %d (%s)", cp, before.CheckpointTime)

	code, out := cli(t, server, "changefeed", "pause", "cf-1")
	require.Equal(t, 0, code, out)
	code, out = cli(t, server, "changefeed", "resume", "cf-1", "--overwrite-checkpoint-ts", "1796282411917")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "looks like Unix milliseconds; TSO = ms << 18")
	code, out = cli(t, server, "changefeed", "resume", "cf-1", "--overwrite-checkpoint-ts", strconv.FormatUint(cp, 10))
	require.Equal(t, 0, code, out)

	deadline := time.Now().Add(30 * time.Second)
	for {
		info := query()
		require.GreaterOrEqual(t, info.CheckpointTs, cp, "the resume moved the checkpoint below the printed one: %+v", info)
		require.GreaterOrEqual(t, info.StoredTs, cp, "%+v", info)
		if info.State == spec.StateNormal && info.CheckpointTs > cp {
			t.Logf("resumed: checkpoint_ts %d (%s)", info.CheckpointTs, info.CheckpointTime)
			break
		}
		require.True(t, time.Now().Before(deadline), "never advanced past %d after the resume: %+v", cp, info)
		time.Sleep(200 * time.Millisecond)
	}
}

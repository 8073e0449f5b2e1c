package cluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/runtime/server"
	"cdcspec/spec"
)

// TestLogTailAndFields: the tail sees only lines written after it started,
// holds a partial line until it is complete, and blockStatus matches the
// block status lines impl writes (spec/logs.go) by blockTs and stage.
func TestLogTailAndFields(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "capture-0.log")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	lg := server.NewWallClockLogger(f, "info")
	span := spec.Span{Table: 3, Start: "a", End: "m"}
	lg.Event(nil, spec.Event{Kind: spec.BlockStatusReported, Changefeed: "default/cf", Node: "n1", Dispatcher: "d1",
		Span: spec.WholeTable(3), Checkpoint: 100, State: "WAITING"})
	c := &Cluster{procs: []*proc{{log: path}}}
	tail := c.tailLogs()
	assert.Empty(t, tail.lines(), "lines before the tail started")

	lg.Event(nil, spec.Event{Kind: spec.BlockStatusReported, Changefeed: "default/cf", Node: "n2", Dispatcher: "d2",
		Span: span, Checkpoint: 100, State: "DONE"})
	_, err = f.WriteString("[partial")
	require.NoError(t, err)
	got, err := tail.wait(context.Background(), time.Second, func(l string) bool { return blockStatus(l, 100, "DONE") })
	require.NoError(t, err)
	assert.Equal(t, "n2", field(got, "nodeID"))
	assert.Equal(t, "t3", spanTable.FindString(field(got, "tableSpan")), "a split span's line names its table: %s", got)
	assert.Equal(t, "", field(got, "nosuchkey"))
	assert.False(t, blockStatus(got, 100, "WAITING"))
	assert.False(t, blockStatus(got, 10, "DONE"))

	_, err = f.WriteString(" line]\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"[partial line]\n"}, tail.lines(), "a partial line is returned once complete")
	_, err = tail.wait(context.Background(), 30*time.Millisecond, func(string) bool { return true })
	assert.Error(t, err, "no new line: the wait times out")

}

// TestBarrierBugFaults (CDCSPEC_LONG=1, about 4 min): on real processes,
// move-writer-during-ddl and drop-add-table-status open their windows
// (Recovery.PathReached) and, with the bug switched on, the run's own
// checks report it: writer-not-passed-after-move leaves the barrier stuck
// (the checkpoint never settles; checkpoint-advances-after-heal), and
// db-ddl-before-table-ddls-acked writes the DB DDL above rows of the new
// table that come after it (ddl_order). With the fixes on, the same runs
// are clean.
func TestBarrierBugFaults(t *testing.T) {
	if os.Getenv("CDCSPEC_LONG") == "" {
		t.Skip("set CDCSPEC_LONG=1")
	}
	for _, tc := range []struct {
		fault spec.Fault
		bug   string
		check func(t *testing.T, res *Result)
	}{
		{spec.FaultMoveWriterDuringDDL, "writer-not-passed-after-move", func(t *testing.T, res *Result) {
			assert.False(t, res.Settled, "the moved writer is never passed: the checkpoint stays below the DDL")
			found := false
			for _, f := range res.Findings {
				found = found || (f.Property == "checkpoint-advances-after-heal" && f.Severity == "violation")
			}
			assert.True(t, found, "findings %+v", res.Findings)
		}},
		{spec.FaultDropAddTableStatus, "db-ddl-before-table-ddls-acked", func(t *testing.T, res *Result) {
			assert.Positive(t, res.DDLOrderViolations, "rows of the new table below the DB DDL come after it")
		}},
	} {
		for _, bug := range []string{"", tc.bug} {
			t.Run(string(tc.fault)+"/"+bug, func(t *testing.T) {
				steps, err := Schedule([]string{string(tc.fault)}, 20*time.Second)
				require.NoError(t, err)
				cfg := Config{Binary: binary, LogDir: t.TempDir(), Progress: testLog{t}}
				if bug != "" {
					cfg.Bugs = []string{bug}
				}
				res, err := Run(context.Background(), RunConfig{Cluster: cfg, Steps: steps, Duration: 20 * time.Second, SettleTimeout: 30 * time.Second})
				require.NoError(t, err)
				require.Len(t, res.Recovery, 1)
				assert.True(t, res.Recovery[0].PathReached, "window not opened: %+v", res.Recovery[0])
				assert.Zero(t, res.Lost)
				if bug == "" {
					assert.True(t, res.OK(), "fixed run: settled=%v %s violations=%d ddl_order=%d failures=%v",
						res.Settled, res.SettleError, res.Violations, res.DDLOrderViolations, res.Failures)
					return
				}
				assert.False(t, res.OK())
				tc.check(t, res)
			})
		}
	}
}

package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/runtime/adminapi"
	"cdcspec/runtime/cluster"
)

// TestRunReportText: the final checkpoint is a TSO with its UTC time, a
// stretched fault phase is said so with why, and an interrupted run says
// in which phase and what it did not check.
func TestRunReportText(t *testing.T) {
	const cp = 470884656589570048 // 1796282411917 ms << 18
	r := &cluster.Result{FinalCheckpointTs: cp, FinalCheckpointTime: adminapi.TSOTime(cp), Settled: true, DataChecked: true, TraceChecked: true,
		FaultPhase: cluster.FaultPhase{PlannedMs: 30_000, ActualMs: 39_700, Stretched: true, Why: []string{"move-table planned at 20.0s, applied at 36.7s (applied at attempt 4)"}},
		Recovery:   []cluster.Recovery{{Fault: "move-table", AtMs: 36_700, PlannedAtMs: 20_000, Late: "applied at attempt 4", Attempts: 4}}}
	var b bytes.Buffer
	writeRunText(&b, r)
	out := b.String()
	require.Contains(t, out, "checkpoint: final 470884656589570048 (TSO; 2026-12-03 07:20:11.917 UTC)")
	require.Contains(t, out, "faults:     phase STRETCHED: planned 30.0s (--duration), took 39.7s: move-table planned at 20.0s, applied at 36.7s")
	require.Contains(t, out, "planned at 20.0s: applied at attempt 4")
	require.NotContains(t, out, "1796282411917")

	r = &cluster.Result{Interrupted: "received interrupt", InterruptedIn: cluster.PhaseCheck, DataChecked: false, TraceChecked: true,
		Unchecked: []string{"data: the topic read was cut 1s after the signal"}}
	b.Reset()
	writeRunText(&b, r)
	out = b.String()
	require.Contains(t, out, "cdcspec run: INTERRUPTED (received interrupt) during check: partial report")
	require.Contains(t, out, "unchecked:  data: the topic read was cut")
	require.Contains(t, out, "data:       not checked")
}

// TestRunServerHelp: run -h and server -h are on stdout with a
// description, an example and the exit codes; a bad flag names itself on
// stderr.
func TestRunServerHelp(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{"run", "130 after SIGINT and 143 after SIGTERM"},
		{"server", "1 on capture suicide"},
	} {
		code, out, stderr := runCmd(c.cmd, "-h")
		require.Equal(t, exitOK, code)
		require.Empty(t, stderr)
		for _, w := range []string{"usage: cdcspec " + c.cmd, "Example:\n  cdcspec " + c.cmd, "Exit status: 0", c.want, "-etcd host:port", "-bug NAME"} {
			require.Contains(t, out, w, c.cmd)
		}
		code, out, stderr = runCmd(c.cmd, "--nope")
		require.Equal(t, exitUsage, code)
		require.Empty(t, out)
		require.Contains(t, stderr, "flag provided but not defined: -nope")
		require.Contains(t, stderr, "'cdcspec "+c.cmd+" -h' lists its flags")
	}
}

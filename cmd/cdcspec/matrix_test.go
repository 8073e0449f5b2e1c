package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/model"
	"cdcspec/search"
	"cdcspec/spec"
)

// TestCheckMatrixFlags: bad --matrix input exits 2 with a message naming
// the flag.
func TestCheckMatrixFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--matrix", "--config", "default"}, "--config does not apply"},
		{[]string{"--matrix", "--crashes", "2"}, "--crashes does not apply"},
		{[]string{"--matrix", "--bug", "split-double-add"}, "--bug does not apply"},
		{[]string{"--matrix", "--matrix-rows", "("}, "--matrix-rows"},
		{[]string{"--matrix", "--matrix-rows", "^no-such-row$"}, "matches no row"},
		{[]string{"--matrix", "--row-time", "0s"}, "--row-time must be > 0"},
		{[]string{"--matrix", "--memory", "1MB"}, "--memory"},
		{[]string{"--matrix-rows", "default"}, "--matrix-rows needs --matrix"},
		{[]string{"--row-time", "1m"}, "--row-time needs --matrix"},
		{[]string{"--list"}, "--list needs --matrix"},
	} {
		code, _, errs := runCheckCmd(append([]string{"check"}, c.args...)...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Contains(t, errs, c.want, "%v", c.args)
	}
}

// TestCheckMatrixBounds: a row stopped by --max-states or by its time
// budget is incomplete, says why, and the matrix exits 3; JSON has a row
// per selected configuration and the total.
func TestCheckMatrixBounds(t *testing.T) {
	code, out, errs := runCheckCmd("check", "--matrix", "--matrix-rows", "^(default|split)$", "--max-states", "3000", "--format", "json")
	require.Equal(t, exitIncomplete, code, errs)
	var j matrixJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j), out)
	require.Len(t, j.Rows, 2)
	assert.Equal(t, "incomplete", j.Result)
	for i, name := range []string{"default", "split"} {
		r := j.Rows[i]
		assert.Equal(t, name, r.Name)
		assert.False(t, r.Complete)
		assert.Equal(t, "states", r.Why, r.Detail)
		assert.GreaterOrEqual(t, r.DistinctStates, int64(3000))
		assert.NotEmpty(t, r.Reason)
	}
	assert.Equal(t, int64(3<<30), j.Memory)
	assert.Positive(t, j.TotalSeconds)

	code, out, errs = runCheckCmd("check", "--matrix", "--matrix-rows", "^default$", "--row-time", "100ms")
	require.Equal(t, exitIncomplete, code, errs)
	assert.Regexp(t, `(?m)^default +incomplete +- +budget `, out)
	assert.Regexp(t, `(?m)^total: 1 rows, 0 complete \(0 exhaustive, 0 up to their stated delay bound\), 0 with a violation, [0-9.]+ s$`, out)
}

// TestRunMatrixVerdicts: a row that completes clean is ok (exit 0); a row
// with a catalogued bug on is a violation (exit 1) with its counterexample
// in DIR/ROW; a violation outranks an incomplete row.
func TestRunMatrixVerdicts(t *testing.T) {
	small := model.Base()
	small.Name, small.TsMax = "small", 2
	buggy, ok := model.Standard("upstream-outage")
	require.True(t, ok)
	buggy.Name, buggy.Bugs = "buggy", buggy.Bugs.With(spec.BugStuckAfterUpstreamFailure)
	clean := model.MatrixRow{Name: "small", Reason: "two nodes, one table, no fault", Config: small}
	bug := model.MatrixRow{Name: "buggy", Reason: "a catalogued bug on", Config: buggy}
	o := matrixOpts{rowTime: time.Minute, memory: 1 << 30, format: "text", bounds: search.Bounds{MaxDepth: 0}}

	// A complete clean row, without its minute of search: the check
	// reports OK as model.Check would.
	o.check = func(c model.Config, b search.Bounds, _ func(search.Progress)) (model.Result, error) {
		return model.Result{Config: c, Bounds: b, Stats: search.Stats{Outcome: search.OK, Distinct: 42, Depth: 7, Seconds: 0.5}}, nil
	}
	var out, errb bytes.Buffer
	code := runMatrix(context.Background(), []model.MatrixRow{clean}, o, nil, &out, &errb)
	require.Equal(t, exitOK, code, "%s%s", out.String(), errb.String())
	assert.Regexp(t, `(?m)^small +complete +all +- +42 +7 +0.5 .*ok \[unbounded\]$`, out.String())
	assert.Regexp(t, `(?m)^total: 1 rows, 1 complete \(1 exhaustive, 0 up to their stated delay bound\), 0 with a violation`, out.String())
	o.check = nil

	o.artifacts = t.TempDir()
	o.bounds.MaxStates = 2000 // cuts the clean row; the buggy one's violation is shallower
	out.Reset()
	code = runMatrix(context.Background(), []model.MatrixRow{clean, bug}, o, nil, &out, &errb)
	require.Equal(t, exitViolation, code, out.String())
	assert.Regexp(t, `(?m)^buggy +violation +- +- .*violation: `+string(spec.CheckpointAdvancesAfterHeal), out.String())
	story, err := os.ReadFile(filepath.Join(o.artifacts, "buggy", "counterexample.txt"))
	require.NoError(t, err)
	assert.NotEmpty(t, story)
	cmd, err := os.ReadFile(filepath.Join(o.artifacts, "buggy", "command.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(cmd), "--matrix-rows ^buggy$")

	// A row whose search settings the search cannot take is refused up front.
	delayed := clean
	delayed.Config.DelayBound = search.MaxDelayBound + 1
	errb.Reset()
	code = runMatrix(context.Background(), []model.MatrixRow{delayed}, o, nil, &out, &errb)
	require.Equal(t, exitUsage, code)
	assert.Contains(t, errb.String(), `matrix row "small": config "small": stated delay bound must be`)

	// An interrupted matrix runs no further row.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	code = runMatrix(ctx, []model.MatrixRow{clean}, o, nil, &out, &errb)
	require.Equal(t, exitIncomplete, code)
	assert.True(t, strings.Contains(out.String(), "not-run"), out.String())
}

// TestRunMatrixStatedBound: a row with a stated delay bound is complete
// when every schedule within it was explored (exit 0), shows its k, and
// with --row-deepen goes on to larger bounds until its time runs out and
// shows the largest that completed.
func TestRunMatrixStatedBound(t *testing.T) {
	small := model.Base()
	small.Name, small.TsMax, small.DelayBound = "small", 2, 2
	row := model.MatrixRow{Name: "small", Reason: "two nodes, one table, no fault", Config: small}
	o := matrixOpts{rowTime: time.Minute, memory: 1 << 30, format: "json", bounds: search.Bounds{SafetyOnly: true}}
	var out, errb bytes.Buffer
	code := runMatrix(context.Background(), []model.MatrixRow{row}, o, nil, &out, &errb)
	require.Equal(t, exitOK, code, "%s%s", out.String(), errb.String())
	var j matrixJSON
	require.NoError(t, json.Unmarshal(out.Bytes(), &j))
	r := j.Rows[0]
	assert.True(t, r.Complete)
	assert.False(t, r.Exhaustive)
	assert.Equal(t, 2, r.StatedDelayBound)
	require.NotNil(t, r.CompleteUpToDelays)
	assert.Equal(t, 2, *r.CompleteUpToDelays)
	assert.Empty(t, r.DelayTries)

	o.deepen, o.rowTime = true, 2*time.Second
	out.Reset()
	code = runMatrix(context.Background(), []model.MatrixRow{row}, o, nil, &out, &errb)
	require.Equal(t, exitOK, code, "%s%s", out.String(), errb.String())
	j = matrixJSON{}
	require.NoError(t, json.Unmarshal(out.Bytes(), &j))
	r = j.Rows[0]
	assert.True(t, r.Complete)
	require.NotEmpty(t, r.DelayTries)
	assert.Equal(t, 2, r.DelayTries[0].K, "the deepening starts at the stated bound")
	if !r.Exhaustive {
		require.NotNil(t, r.CompleteUpToDelays)
		assert.Greater(t, *r.CompleteUpToDelays, 2, "two seconds reach past k=2 on the smallest configuration")
	}
}

// TestCheckMatrixList: --list runs nothing and shows, per feature x fault
// pair, the rows that cover it or why none can.
func TestCheckMatrixList(t *testing.T) {
	code, out, errs := runCheckCmd("check", "--matrix", "--list", "--format", "json")
	require.Equal(t, exitOK, code, errs)
	var j matrixListJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	assert.Len(t, j.Rows, len(model.Matrix()))
	assert.Len(t, j.Cells, len(model.MatrixFeatures())*len(model.MatrixFaults()))
	for _, c := range j.Cells {
		assert.True(t, (len(c.Rows) > 0) != (c.Impossible != ""), "%+v", c)
	}
	code, out, _ = runCheckCmd("check", "--matrix", "--list", "--matrix-rows", "^move-loss$")
	require.Equal(t, exitOK, code)
	assert.Regexp(t, `(?m)^1 rows$`, out)
	assert.Regexp(t, `(?m)^span-move +drop-messages +move-loss, move-crash-loss$`, out)
	assert.Regexp(t, `(?m)^two-blocking-ddls +partition +impossible until `, out)
}

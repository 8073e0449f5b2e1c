package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceHTMLReport: --format html writes one self-contained page with a
// timeline per changefeed; the exit status still follows the findings.
func TestTraceHTMLReport(t *testing.T) {
	code, out, errOut := runTraceCmd(t, "", "--format", "html", fixtures+"seed000_5709.log", fixtures+"seed001_3952_combined.log")
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "<!DOCTYPE html>"))
	assert.Equal(t, 3, strings.Count(out, `<svg class="timeline"`), "two changefeeds and the cluster")
	assert.Contains(t, out, "removal-only maintainer")
	code, out, _ = runTraceCmd(t, "", "--format", "html", fixtures+"planted_duplicate_dispatcher.log")
	assert.Equal(t, exitViolation, code)
	assert.Contains(t, out, `class="violation"`)
}

// TestCheckArtifactsHTML: a counterexample's artifacts include its
// message-sequence chart.
func TestCheckArtifactsHTML(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"check", "--bug", "add-accepts-unbootstrapped-maintainer", "--artifacts", dir}, &out, &errb)
	require.Equal(t, exitViolation, code, errb.String())
	page, err := os.ReadFile(filepath.Join(dir, "counterexample.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `<svg class="msc"`)
	assert.Contains(t, string(page), "AddMaintainerRequest")
	assert.Contains(t, string(page), "running-maintainer-bootstrapped")
}

// TestTraceJSONCoverageRecognised: the JSON coverage says how many records
// the catalogue knew and which messages it did not, most frequent first;
// findings carry their aggregation.
func TestTraceJSONCoverageRecognised(t *testing.T) {
	code, out, _ := runTraceCmd(t, "", "--format", "json", fixtures+"healthy")
	require.Equal(t, exitOK, code)
	var rep struct {
		Coverage struct {
			Recognised      int64 `json:"recognised"`
			UnknownMessages []struct {
				Message string `json:"message"`
				Count   int64  `json:"count"`
			} `json:"unknown_messages"`
		} `json:"coverage"`
		Findings []struct {
			Count int64 `json:"count"`
		} `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.EqualValues(t, 30, rep.Coverage.Recognised)
	require.NotEmpty(t, rep.Coverage.UnknownMessages)
	assert.Equal(t, "server initialized", rep.Coverage.UnknownMessages[0].Message)
	assert.EqualValues(t, 2, rep.Coverage.UnknownMessages[0].Count)
	for _, f := range rep.Findings {
		assert.GreaterOrEqual(t, f.Count, int64(1))
	}
}

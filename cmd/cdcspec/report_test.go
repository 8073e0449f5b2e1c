package main

import (
	"bytes"
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
	assert.Equal(t, 2, strings.Count(out, `<svg class="timeline"`))
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

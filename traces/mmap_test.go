package traces

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mappedTestLog is a log that crosses many chunks: generated TiCDC HEAD
// lines around records longer than a chunk and longer than the buffer
// bound, and a seed log's incident, with no newline at the end.
func mappedTestLog(t *testing.T) []byte {
	var b bytes.Buffer
	_, err := GenerateLog(&b, 3*chunkSize, 7)
	require.NoError(t, err)
	huge := func(ms int, val string) {
		b.WriteString("[2026/07/22 16:30:15." + fmtInt(100+ms) + " +00:00] [ERROR] [maintainer.go:799] [\"dispatcher report an error\"] [changefeedID=default/cf] [sourceNode=n2] [error=\"" + val + "\"]\n")
	}
	huge(1, strings.Repeat("x", 3*chunkSize))
	huge(2, strings.Repeat("y", maxBuf+chunkSize))
	_, err = GenerateLog(&b, 2*chunkSize, 8)
	require.NoError(t, err)
	seed, err := os.ReadFile("testdata/seed000_5709.log")
	require.NoError(t, err)
	b.Write(bytes.TrimRight(seed, "\n"))
	return b.Bytes()
}

// TestMappedEqualsRead: a file checked in place (mapped) and the same
// bytes read from a stream give the same report, to the byte counts, line
// numbers and evidence.
func TestMappedEqualsRead(t *testing.T) {
	data := mappedTestLog(t)
	path := filepath.Join(t.TempDir(), "cdc.log")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	if runtime.GOOS == "linux" {
		f, err := os.Open(path)
		require.NoError(t, err)
		m, ok := mapInput(f)
		require.True(t, ok, "a regular log file is mapped")
		unmapInput(m)
		require.NoError(t, f.Close())
	}
	mapped, err := Run([]Input{fileInput(path)}, Options{})
	require.NoError(t, err)
	read, err := Run([]Input{{Name: path, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}}, Options{})
	require.NoError(t, err)
	mapped.Seconds, read.Seconds = 0, 0
	require.Positive(t, read.Stats.Truncated, "the huge record is cut")
	require.NotEmpty(t, read.Findings, "the seed's incident is found")
	assert.Equal(t, read.Stats, mapped.Stats)
	assert.Equal(t, read.Coverage, mapped.Coverage)
	assert.Equal(t, read.Findings, mapped.Findings)
	assert.Equal(t, read.Inputs, mapped.Inputs)
}

// TestMappedInputTruncated: a mapped file that shrinks under the check
// (copytruncate rotation) is an error naming what happened, not a crash.
func TestMappedInputTruncated(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inputs are mapped on Linux only")
	}
	path := filepath.Join(t.TempDir(), "cdc.log")
	var b bytes.Buffer
	_, err := GenerateLog(&b, 4*chunkSize, 3)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, ok := mapInput(f)
	require.True(t, ok)
	defer unmapInput(m)
	require.NoError(t, os.Truncate(path, 0))

	// a parse worker
	parsed := make(chan error)
	go func() {
		debug.SetPanicOnFault(true)
		parsed <- parseGuarded(&chunk{data: m}, path, 0, new(parseCache), m)
	}()
	require.ErrorContains(t, <-parsed, "shrank while it was being read")

	// the splitter
	p := &splitter{csize: chunkSize, work: make(chan *chunk, 64), ordered: make(chan *chunk, 64), free: make(chan *chunk, 1)}
	p.splitMapped(m)
	for range p.ordered {
	}
	require.ErrorContains(t, p.err, "shrank while it was being read")
}

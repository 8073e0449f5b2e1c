package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestCheckTSOFlag: a TSO whose physical part is before 2015 or after now +
// 1 day is refused, with a hint when it is Unix milliseconds or seconds.
func TestCheckTSOFlag(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	nowTSO := spec.TSO(uint64(now.UnixMilli()))
	require.NoError(t, checkTSOFlag("--start-ts", 0, now))
	require.NoError(t, checkTSOFlag("--start-ts", nowTSO, now))
	require.NoError(t, checkTSOFlag("--start-ts", nowTSO|12345, now), "a logical part is fine")
	require.NoError(t, checkTSOFlag("--start-ts", spec.TSO(uint64(tsoFloor.UnixMilli())), now))
	for _, c := range []struct {
		v    uint64
		want string
	}{
		{1796282411917, "looks like Unix milliseconds; TSO = ms << 18, here 470884656589570048"},
		{1796282411, "looks like Unix seconds"},
		{1 << 18, "a TSO is (Unix ms << 18) | logical"},
		{spec.TSO(uint64(now.Add(25 * time.Hour).UnixMilli())), "after now + 1 day"},
		{1<<64 - 1, "before 2015 or after now + 1 day"},
	} {
		err := checkTSOFlag("--overwrite-checkpoint-ts", c.v, now)
		require.ErrorContains(t, err, c.want, "%d", c.v)
		require.ErrorContains(t, err, fmt.Sprintf("--overwrite-checkpoint-ts %d", c.v))
	}
}

// TestCLIRefusesMilliseconds: the commands, Unix milliseconds as a
// TSO, exit 2 with the hint and send nothing.
func TestCLIRefusesMilliseconds(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
	defer srv.Close()
	for _, args := range [][]string{
		{"cli", "changefeed", "resume", "cf-1", "--overwrite-checkpoint-ts", "1796282411917", "--server", srv.URL},
		{"cli", "changefeed", "create", "cf-3", "--start-ts", "1796282411917", "--server", srv.URL},
	} {
		code, _, stderr := runCmd(args...)
		require.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		require.Contains(t, stderr, "looks like Unix milliseconds; TSO = ms << 18", args)
	}
	require.Zero(t, calls)
}

// TestCLIHelp: every cli -h is on stdout with a description, an example,
// the exit codes and only the command's own flags.
func TestCLIHelp(t *testing.T) {
	code, out, _ := runCmd("cli", "-h")
	require.Equal(t, exitOK, code)
	for _, c := range cliCommands {
		require.Contains(t, out, c.short)
	}
	for _, c := range cliCommands {
		for _, verb := range []string{c.verb, c.alias} {
			if verb == "" {
				continue
			}
			code, out, stderr := runCmd("cli", c.target, verb, "-h")
			require.Equal(t, exitOK, code, verb)
			require.Empty(t, stderr)
			require.Contains(t, out, c.short)
			require.Contains(t, out, "Example:\n  cdcspec cli "+c.target+" "+c.verb)
			require.Contains(t, out, "Exit status: 0 success")
			require.Contains(t, out, "-server")
			require.Equal(t, c.needID, strings.Contains(out, "-changefeed-id"), "%s %s", c.target, verb)
			for _, other := range cliCommands {
				for _, f := range other.flags {
					require.Equal(t, contains(c.flags, f), strings.Contains(out, "-"+f+" "), "%s %s -h and --%s:\n%s", c.target, verb, f, out)
				}
			}
		}
	}
}

// TestCLIQuery: cdc's query, and get as its alias, print the changefeed;
// a flag of another command is refused naming it.
func TestCLIQuery(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":"cf-1","state":"normal","checkpoint_ts":470884656589570048,"checkpoint_time":"2026-12-03 07:20:11.917"}`))
	}))
	defer srv.Close()
	for _, verb := range []string{"query", "get"} {
		code, out, stderr := runCmd("cli", "changefeed", verb, "-c", "cf-1", "--server", srv.URL)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, `"checkpoint_ts": 470884656589570048`)
		require.Contains(t, out, `"checkpoint_time": "2026-12-03 07:20:11.917"`)
	}
	code, _, stderr := runCmd("cli", "capture", "list", "--start-ts", "5", "--server", srv.URL)
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "--start-ts applies to changefeed create only")
}

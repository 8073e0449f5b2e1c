package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadFlagsRefused feeds each bad input of issue 15's "Found" list (and
// their neighbours): every one exits 2 before any work starts, naming the
// flag, the value and the valid range, without a panic.
func TestBadFlagsRefused(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "-tables", "-2"}, "-tables -2 out of range [0, 64]"},
		{[]string{"sim", "-changefeeds", "-5"}, "-changefeeds -5 out of range [0, 8]"},
		{[]string{"sim", "-level", "loud"}, `-level "loud" unknown (known: debug, info, warn, error)`},
		{[]string{"sim", "-nodes", "1000"}, "-nodes 1000 out of range [1, 16]"},
		{[]string{"sim", "-nodes", "0"}, "-nodes 0 out of range [1, 16]"},
		{[]string{"sim", "-seeds", "0"}, "-seeds 0 out of range"},
		{[]string{"sim", "-steps", "-1"}, "-steps -1 out of range [1, 10000]"},
		{[]string{"sim", "-seed", "18446744073709551615", "-seeds", "2"}, "overflows"},
		{[]string{"run", "--rate", "-5", "--faults", "none", "--duration", "2s"}, "--rate -5 out of range [1, 1000000]"},
		{[]string{"run", "--rate", "-5", "--duration", "2s"}, "--rate -5 out of range"},
		{[]string{"run", "--nodes", "0"}, "--nodes 0 out of range [1, 16]"},
		{[]string{"run", "--tables", "0"}, "--tables 0 out of range [1, 64]"},
		{[]string{"run", "--rate", "0"}, "--rate 0 out of range"},
		{[]string{"run", "--rate", "NaN"}, "--rate NaN out of range"},
		{[]string{"run", "--nodes", "100"}, "--nodes 100 out of range"},
		{[]string{"run", "--bug", "nope"}, `--bug: unknown bug "nope"`},
		{[]string{"run", "--session-ttl", "0s"}, "--session-ttl 0s out of range [1s, 1m0s]"},
		{[]string{"run", "--kafka-timeout", "-1s"}, "--kafka-timeout -1s out of range"},
		{[]string{"run", "--ddl-every", "10ms"}, "--ddl-every 10ms out of range"},
		{[]string{"run", "--settle-timeout", "0s"}, "--settle-timeout 0s out of range"},
		{[]string{"run", "--kafka-listen", "nohost"}, `--kafka-listen "nohost" is not host:port`},
		{[]string{"run", "--kafka", "k:1", "--faults", "sink-error,move-table"}, "sink-error times Kafka out in the embedded kfake"},
		{[]string{"run", "--kafka", "127.0.0.1:1"}, "--kafka 127.0.0.1:1 does not answer within 5s"},
		{[]string{"run", "--faults", "none,kill-capture"}, `"none" cannot be combined`},
		{[]string{"run", "--faults", ""}, "--faults is empty"},
		{[]string{"run", "--scenario", "seed-5709", "--faults", "none"}, "cannot go with --faults"},
		{[]string{"server", "--etcd", "e:1", "--kafka", "k:1", "--log-level", "loud"}, `--log-level "loud" unknown`},
		{[]string{"server", "--etcd", "e:1", "--kafka", "k:1", "--partitions", "0"}, "--partitions 0 out of range [1, 1024]"},
		{[]string{"server", "--etcd", "e:1", "--kafka", "k:1", "--session-ttl", "0s"}, "--session-ttl 0s out of range"},
		{[]string{"server", "--etcd", "e:1", "--kafka", "nokafkaport"}, `--kafka "nokafkaport" is not host:port`},
		{[]string{"server", "--etcd", "e:1", "--kafka", "k:1", "--addr", "x:99999"}, `port "99999" out of range`},
		{[]string{"cli", "frob", "list"}, `unknown target "frob" (known: capture, changefeed)`},
		{[]string{"cli", "changefeed", "frobnicate"}, `unknown command "frobnicate" (known: create, get, list,`},
		{[]string{"cli", "changefeed"}, "missing command"},
		{[]string{"cli", "changefeed", "get", "cf", "--timeout", "-1s"}, "--timeout -1s out of range [1ms, 10m0s]"},
		{[]string{"cli", "changefeed", "get", "a", "b"}, "one changefeed ID expected"},
		{[]string{"cli", "changefeed", "get", "a", "--changefeed-id", "b"}, "name different changefeeds"},
		{[]string{"cli", "changefeed", "create", "cf", "--start-ts", "1"}, "--start-ts 1 is not a TSO"},
		{[]string{"cli", "changefeed", "get", "cf", "--start-ts", "5"}, "--start-ts applies to changefeed create only"},
		{[]string{"cli", "capture", "list", "extra"}, `unexpected argument "extra"`},
		{[]string{"cli", "changefeed", "get", "cf", "--server", "ftp://x:1"}, `--server "ftp://x:1" is not http://host:port`},
	}
	for _, c := range cases {
		start := time.Now()
		code, _, stderr := runCmd(c.args...)
		assert.Equal(t, exitUsage, code, "%v: stderr %q", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.NotContains(t, stderr, "goroutine", "%v", c.args)
		assert.Less(t, time.Since(start), 2*time.Second, "%v took long to refuse", c.args)
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, cmd := range []string{"run", "server", "cli"} { // sim: TestHelpOnStdout
		code, stdout, stderr := runCmd(cmd, "--help")
		assert.Equal(t, exitOK, code, "%s --help: %q", cmd, stderr)
		assert.Contains(t, stdout+stderr, "usage", cmd)
	}
	code, _, _ := runCmd("cli", "changefeed", "get", "--help")
	assert.Equal(t, exitOK, code)
}

// TestCLIPositionalID: the changefeed ID may be the first argument (flags
// before or after it) or --changefeed-id / -c; a move to a capture that
// does not exist is the server's error, stated once, exit 1.
func TestCLIPositionalID(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/move_table") {
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error_msg":"[CDC:ErrNodeIsNotFound]node is not found: target node \"nope\" is not a live capture (captures: a, b)","error_code":"CDC:ErrNodeIsNotFound"}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"cf-1","state":"normal"}`))
	}))
	defer srv.Close()
	for _, args := range [][]string{
		{"cli", "changefeed", "get", "cf-1", "--server", srv.URL},
		{"cli", "changefeed", "get", "--server", srv.URL, "cf-1"},
		{"cli", "changefeed", "get", "-c", "cf-1", "--server", srv.URL},
		{"cli", "changefeed", "get", "cf-1", "--changefeed-id", "cf-1", "--server", srv.URL},
	} {
		code, out, stderr := runCmd(args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
		require.Contains(t, out, `"cf-1"`)
	}
	code, _, stderr := runCmd("cli", "changefeed", "move-table", "cf-1", "--table-id", "1", "--target-node-id", "nope", "--server", srv.URL)
	require.Equal(t, exitViolation, code)
	require.Equal(t, 1, strings.Count(stderr, "ErrNodeIsNotFound"), stderr)
	require.Contains(t, stderr, `target node "nope" is not a live capture`)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"GET /api/v2/changefeeds/cf-1", "GET /api/v2/changefeeds/cf-1", "GET /api/v2/changefeeds/cf-1",
		"GET /api/v2/changefeeds/cf-1", "POST /api/v2/changefeeds/cf-1/move_table"}, seen)
}

func TestSignalExit(t *testing.T) {
	require.Equal(t, 130, signalExit(syscall.SIGINT))
	require.Equal(t, 143, signalExit(syscall.SIGTERM))
}

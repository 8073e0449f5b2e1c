package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRuntimeCommandsUsage(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"server"}, "--etcd and --kafka are required"},
		{[]string{"server", "--etcd", "x:1", "--kafka", "y:1", "extra"}, "unexpected argument"},
		{[]string{"run", "--format", "xml"}, "unknown format"},
		{[]string{"run", "--faults", "kill-capture,meteor"}, `--faults: unknown fault "meteor" (known: kill-capture, `},
		{[]string{"run", "--faults", "kill"}, `--faults: unknown fault "kill"`},
		{[]string{"run", "--faults", "partition"}, "--faults: fault partition: cdcspec run cannot inject it"},
		{[]string{"run", "--scenario", "seed-0"}, "unknown scenario"},
		{[]string{"run", "--duration", "0s"}, "--duration 0s out of range [1s, 24h0m0s]"},
		{[]string{"cli"}, "usage: cdcspec cli"},
		{[]string{"cli", "changefeed", "get"}, "needs a changefeed ID"},
		{[]string{"cli", "changefeed", "fly", "--changefeed-id", "a"}, `unknown command "fly"`},
		{[]string{"cli", "changefeed", "move-table", "--changefeed-id", "a"}, "move-table needs --table-id (> 0, got 0) and --target-node-id"},
	}
	for _, c := range cases {
		code, _, stderr := runCmd(c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, exitUsage, stderr)
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q does not mention %q", c.args, stderr, c.want)
		}
	}
	if code, _, stderr := runCmd("server", "--etcd", "127.0.0.1:1", "--kafka", "127.0.0.1:1", "--bug", "no-such-bug"); code != exitUsage || !strings.Contains(stderr, "unknown bug") {
		t.Errorf("server with an unknown bug: exit %d, stderr %q", code, stderr)
	}
}

func TestCLIAgainstServer(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api/v2/changefeeds/gone":
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error_msg":"[CDC:ErrChangeFeedNotExists]changefeed not exists","error_code":"CDC:ErrChangeFeedNotExists"}`))
		case r.URL.Path == "/api/v2/changefeeds" && r.Method == "GET":
			_, _ = w.Write([]byte(`{"total":1,"items":[{"id":"cf","state":"normal","checkpoint_ts":7}]}`))
		case r.URL.Path == "/api/v2/changefeeds/cf" && r.Method == "GET":
			_, _ = w.Write([]byte(`{"id":"cf","state":"stopped","checkpoint_ts":7}`))
		default:
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	code, out, stderr := runCmd("cli", "changefeed", "list", "--server", srv.URL)
	if code != exitOK || !strings.Contains(out, `"checkpoint_ts": 7`) {
		t.Fatalf("list: exit %d out %q err %q", code, out, stderr)
	}
	code, out, _ = runCmd("cli", "changefeed", "get", "--server", srv.URL, "--changefeed-id", "cf")
	if code != exitOK || !strings.Contains(out, `"state": "stopped"`) {
		t.Fatalf("get: exit %d out %q", code, out)
	}
	if code, _, _ := runCmd("cli", "changefeed", "pause", "--server", srv.URL, "--changefeed-id", "cf"); code != exitOK {
		t.Fatalf("pause: exit %d", code)
	}
	code, _, stderr = runCmd("cli", "changefeed", "get", "--server", srv.URL, "--changefeed-id", "gone")
	if code != exitViolation || !strings.Contains(stderr, "ErrChangeFeedNotExists") {
		t.Fatalf("get of a missing changefeed: exit %d stderr %q", code, stderr)
	}
	if n := strings.Count(stderr, "ErrChangeFeedNotExists"); n != 1 {
		t.Fatalf("the error code is stated %d times, want once: %q", n, stderr)
	}
	want := []string{"GET /api/v2/changefeeds", "GET /api/v2/changefeeds/cf", "POST /api/v2/changefeeds/cf/pause", "GET /api/v2/changefeeds/gone"}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("requests %v, want %v", seen, want)
	}
}

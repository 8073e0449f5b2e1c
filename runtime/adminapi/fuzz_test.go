package adminapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// logBackend is a fakeBackend that records the bad requests it is told of.
type logBackend struct {
	*fakeBackend
	mu  sync.Mutex
	bad []string
}

func (l *logBackend) LogBadRequest(method, path string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bad = append(l.bad, method+" "+path+": "+err.Error())
}

var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/api/v2/changefeeds"},
	{"POST", "/api/v2/changefeeds/cf/resume"},
	{"POST", "/api/v2/changefeeds/cf/move_table"},
	{"POST", "/api/v2/changefeeds/cf/split_table"},
	{"POST", "/api/v2/debug/failpoints"},
	{"POST", "/api/v2/debug/delay"},
	{"POST", "/api/v2/debug/changefeeds/cf/move_maintainer"},
}

// FuzzRequestBodies: no request body crashes the API; every answer is
// JSON with a status of 200, 4xx or 503; a malformed body is answered 4xx
// and logged through the backend.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"changefeed_id":"cf","start_ts":1}`, `{"changefeed_id":"a/b"}`, `{"table_id":1,"target_node_id":"n"}`,
		`{"overwrite_checkpoint_ts":18446744073709551615}`, `{"name":"BlockCreateDispatcher","on":true}`, `{"type":"x","action":"dup","delay_ms":1,"count":1}`,
		`[`, `{"changefeed_id":` + strings.Repeat("[", 10000), `null`, `"x"`} {
		for i := range fuzzRoutes {
			f.Add(uint8(i), []byte(s))
		}
	}
	// One handler for the whole worker, its backend reset before each
	// input: building the ServeMux was three quarters of an execution,
	// which made the fuzzer's minimization of a new input (up to
	// -fuzzminimizetime, 60 s by default, reported as 0 execs/s) crawl.
	b := &logBackend{}
	h := Handler(b)
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		b.fakeBackend, b.bad = &fakeBackend{cfs: map[string]string{"cf": "stopped"}, isOwn: true}, nil
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(rt.method, rt.path, bytes.NewReader(body))
		h.ServeHTTP(rec, req)
		code := rec.Code
		if code != 200 && code != 503 && (code < 400 || code > 499) {
			t.Fatalf("%s %s %q: status %d", rt.method, rt.path, body, code)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s %s: content type %q", rt.method, rt.path, ct)
		}
		if code == http.StatusBadRequest && strings.Contains(rec.Body.String(), "bad JSON body") && len(b.bad) == 0 {
			t.Fatalf("%s %s: a malformed body was refused but not logged", rt.method, rt.path)
		}
	})
}

// TestBodyLimit: a body above the limit is refused with 413 unread, and
// logged.
func TestBodyLimit(t *testing.T) {
	b := &logBackend{fakeBackend: &fakeBackend{cfs: map[string]string{}, isOwn: true}}
	for _, c := range []struct {
		path  string
		limit int
	}{{"/api/v2/changefeeds", MaxBody}, {"/api/v2/debug/delay", MaxDebugBody}} {
		body := `{"changefeed_id":"` + strings.Repeat("x", c.limit) + `"}`
		rec := httptest.NewRecorder()
		Handler(b).ServeHTTP(rec, httptest.NewRequest("POST", c.path, strings.NewReader(body)))
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "request body larger than") {
			t.Fatalf("%s: %d-byte body: status %d %s", c.path, len(body), rec.Code, rec.Body.String())
		}
	}
	if len(b.bad) != 2 {
		t.Fatalf("logged %d bad requests, want 2: %v", len(b.bad), b.bad)
	}
}

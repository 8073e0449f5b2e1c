package traces

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pingcap/log"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"cdcspec/spec"
)

// formatLine renders one record exactly as pingcap/log's text encoder does,
// with the caller set to file (impl/ logs each event with the canonical
// file name of spec.LogLines).
func formatLine(t testing.TB, file, level, msg string, fields ...zap.Field) []byte {
	t.Helper()
	enc, err := log.NewTextEncoder(&log.Config{Format: "text", DisableErrorVerbose: true})
	if err != nil {
		t.Fatal(err)
	}
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(strings.ToLower(level))); err != nil {
		t.Fatal(err)
	}
	ent := zapcore.Entry{
		Level:   lvl,
		Time:    time.Date(2026, 7, 22, 16, 30, 15, 758e6, time.UTC),
		Caller:  zapcore.NewEntryCaller(0, "/src/cdcspec/impl/x/"+file, 42, true),
		Message: msg,
	}
	buf, err := enc.EncodeEntry(ent, fields)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// parseItems scans text and converts every catalogued record.
func parseItems(t testing.TB, text []byte) []Item {
	t.Helper()
	sc := newBytesScanner(text)
	var out []Item
	for r := sc.Next(); r != nil; r = sc.Next() {
		if e := lookup(r); e != nil {
			out = toItems(r, e, "test.log", 0, out)
		}
	}
	return out
}

// sample values for every Event field, chosen to exercise quoting: the error
// has spaces, quotes, brackets and '='; the span has brackets.
func sampleEvent(ll spec.LogLine) (spec.Event, []zap.Field) {
	e := spec.Event{Kind: ll.Kind}
	var fields []zap.Field
	switch ll.Kind {
	case spec.MaintainerOpStarted, spec.MaintainerOpFinished:
		fields = append(fields, zap.String("role", "coordinator"))
	case spec.DispatcherOpStarted, spec.DispatcherOpFinished:
		fields = append(fields, zap.String("role", "maintainer"))
	}
	for name, key := range ll.Fields {
		switch name {
		case "Changefeed":
			e.Changefeed = "default/cf-1"
			fields = append(fields, zap.String(key, e.Changefeed))
		case "Node":
			e.Node = "3f1e9a62-6b0c-4c51-9a2b-1d0c7f6e5a41"
			fields = append(fields, zap.String(key, e.Node))
		case "Origin":
			e.Origin = "node-2"
			fields = append(fields, zap.String(key, e.Origin))
		case "Dispatcher":
			e.Dispatcher = "8425337346447516283"
			fields = append(fields, zap.String(key, e.Dispatcher))
		case "State":
			e.State = spec.StateWarning
			switch ll.Kind {
			case spec.BlockStatusReported:
				e.State = spec.StageWaiting
			case spec.BlockActionReceived:
				e.State = spec.ActionPass
			}
			fields = append(fields, zap.String(key, e.State))
		case "Err":
			e.Err = `[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed: changefeed=cf-1, dmlInfo=[{"Type":"update"}]; ErrorInfo:read tcp a->b: i/o timeout`
			fields = append(fields, zap.String(key, e.Err))
		case "Reason":
			e.Reason = "stale epoch"
			fields = append(fields, zap.String(key, e.Reason))
		case "Op":
			e.Op = spec.OpMove
			fields = append(fields, zap.String(key, string(e.Op)))
		case "Epoch":
			e.Epoch = 468956885016641547
			fields = append(fields, zap.Uint64(key, e.Epoch))
		case "Checkpoint":
			e.Checkpoint = 463424440748738003
			fields = append(fields, zap.Uint64(key, e.Checkpoint))
		case "NextRetry":
			e.NextRetry = 1767823968641
			fields = append(fields, zap.Time(key, time.UnixMilli(e.NextRetry).UTC()))
		case "Span":
			e.Span = spec.Span{Table: 22, Start: "a", End: "m"}
			if ll.Kind == spec.WorkingTableIgnored || ll.Kind == spec.TableCreated {
				e.Span = spec.Span{Table: 22}
			}
			if key == "tableID" {
				fields = append(fields, zap.Int64(key, e.Span.Table))
			} else {
				fields = append(fields, zap.String(key, spec.SpanText(e.Span)))
			}
		case "Tables":
			e.Tables = []int64{20, 21, 22}
			fields = append(fields, zap.Int64s(key, e.Tables))
		case "BootstrapDone":
			e.BootstrapDone = true
			fields = append(fields, zap.Bool(key, true))
		case "Accepted":
			e.Accepted = true
			fields = append(fields, zap.Bool(key, true))
		case "RemovalOnly":
			e.RemovalOnly = true
			fields = append(fields, zap.Bool(key, true))
		case "Removed":
			e.Removed = true
			fields = append(fields, zap.Bool(key, true))
		case "Merge":
			e.Merge = true
			fields = append(fields, zap.Bool(key, true))
		case "SyncPoint":
			e.SyncPoint = true
			fields = append(fields, zap.Bool(key, true))
		case "Influence":
			e.Influence = spec.InfluenceDB
			fields = append(fields, zap.String(key, spec.InfluenceText(e.Influence)))
		case "Dropped":
			e.Dropped = []int64{20}
			fields = append(fields, zap.Int64s(key, e.Dropped))
		case "Added":
			e.Added = []int64{23, 24}
			fields = append(fields, zap.Int64s(key, e.Added))
		}
	}
	return e, fields
}

// TestCatalogueMapsEveryLogLine: every canonical line of spec.LogLines,
// formatted by pingcap/log as impl/ logs it, parses back to its Kind with
// every field.
func TestCatalogueMapsEveryLogLine(t *testing.T) {
	for _, ll := range spec.LogLines() {
		t.Run(ll.Kind.String(), func(t *testing.T) {
			want, fields := sampleEvent(ll)
			line := formatLine(t, ll.File, ll.Level, ll.Message, fields...)
			items := parseItems(t, line)
			if len(items) != 1 {
				t.Fatalf("line %s: got %d items, want 1", line, len(items))
			}
			got := items[0].Event
			if got.Kind != ll.Kind {
				t.Fatalf("line %s: kind %v, want %v", line, got.Kind, ll.Kind)
			}
			got.Source, got.Time = spec.Source{}, 0
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("line %s\n got  %v\n want %v", line, got, want)
			}
		})
	}
}

// TestNextRetryAsTime: TiCDC and impl/ log nextRetryTime with zap.Time
// (unquoted, with spaces); a number of ms parses too.
func TestNextRetryAsTime(t *testing.T) {
	when := time.Date(2026, 1, 7, 22, 12, 48, 641e6, time.UTC)
	line := formatLine(t, "backoff.go", "WARN", "changefeed meets an error, will be stopped",
		zap.String("changefeed", "default/cf"), zap.Uint64("checkpointTs", 5), zap.Time("nextRetryTime", when), zap.String("error", "x y"))
	items := parseItems(t, line)
	if len(items) != 1 || items[0].Event.NextRetry != when.UnixMilli() || items[0].Event.Err != "x y" {
		t.Fatalf("line %s: items %+v", line, items)
	}
}

// TestTiCDCOperatorLines reads operator lines as TiCDC writes them: role and
// the operator's String(), with the ID logged first under the same key.
func TestTiCDCOperatorLines(t *testing.T) {
	cases := []struct {
		line string
		want string
	}{
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [operator_controller.go:537] ["add operator to running queue"] [role=coordinator] [operator="add maintainer operator: default/cf, dest:n-1"]`,
			"maintainer-op-started cf=default/cf node=n-1 op=add"},
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [operator_controller.go:517] ["operator finished"] [role=coordinator] [operator=default/cf] [operator="stop maintainer operator: default/cf, dest n-2, remove true"]`,
			"maintainer-op-finished cf=default/cf node=n-2 op=stop removed"},
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [operator_controller.go:511] ["add operator to running queue"] [role=maintainer] [changefeedID=default/cf] [operator="move dispatcher operator: 123, origin:n-1, dest:n-2"]`,
			"dispatcher-op-started cf=default/cf node=n-2 origin=n-1 op=move dispatcher=123"},
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [operator_controller.go:449] ["operator finished"] [role=maintainer] [changefeedID=default/cf] [operatorID=123] [operator="add dispatcher operator: 123, dest:n-2"]`,
			"dispatcher-op-finished cf=default/cf node=n-2 op=add dispatcher=123"},
	}
	for _, c := range cases {
		items := parseItems(t, []byte(c.line))
		if len(items) != 1 {
			t.Fatalf("%s: %d items", c.line, len(items))
		}
		if got := items[0].Event.String(); got != c.want {
			t.Errorf("%s\n got  %s\n want %s", c.line, got, c.want)
		}
	}
}

// TestTiCDCSpanForm reads FormatTableSpan's text.
func TestTiCDCSpanForm(t *testing.T) {
	line := `[2026/07/22 16:30:15.758 +00:00] [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf] [dispatcherID=11] [tableSpan="tableID: 22, startKey: 7480000000000000ff165f720000000000fa, endKey: 7480000000000000ff165f730000000000fa, keyspaceID: 0"] [startTs=463424440748738003]`
	items := parseItems(t, []byte(line))
	if len(items) != 1 {
		t.Fatalf("%d items", len(items))
	}
	sp := items[0].Event.Span
	if sp.Table != 22 || sp.Start != "7480000000000000ff165f720000000000fa" || sp.End != "7480000000000000ff165f730000000000fa" {
		t.Fatalf("span %+v", sp)
	}
}

// TestCatalogueSize pins the catalogue's coverage so that an edit that
// quietly drops messages fails.
func TestCatalogueSize(t *testing.T) {
	events, context := 0, 0
	for _, e := range catalogue {
		if e.kind != spec.KindUnknown {
			events++
		} else {
			context++
		}
	}
	if len(catalogue) < 140 || events < 40 {
		t.Fatalf("catalogue has %d messages (%d mapped to events, %d context); want at least 140 and 40", len(catalogue), events, context)
	}
}

// TestCatalogueNoShadowedEntries: lookup returns the first entry of a
// message whose files match, so a later entry of the same message and
// file (or after one that matches any file) would never be used: its
// event or symptom would be silently lost.
func TestCatalogueNoShadowedEntries(t *testing.T) {
	for msg, es := range catalogueIndex {
		for i, a := range es {
			for _, b := range es[i+1:] {
				shadowed := len(a.files) == 0 || len(b.files) == 0
				for _, f := range b.files {
					shadowed = shadowed || slices.Contains(a.files, f)
				}
				if shadowed {
					t.Errorf("%q: the entry for %v (kind %v, symptom %v) hides the one for %v (kind %v, symptom %v)",
						msg, a.files, a.kind, a.sym, b.files, b.kind, b.sym)
				}
			}
		}
	}
}

// TestMsgTableMatchesIndex: the lookup table finds every catalogued
// message's entries and nothing for messages that are not catalogued.
func TestMsgTableMatchesIndex(t *testing.T) {
	for msg, es := range catalogueIndex {
		if got := msgTable.find([]byte(msg)); len(got) != len(es) || got[0] != es[0] {
			t.Fatalf("msgTable.find(%q) = %v, want %v", msg, got, es)
		}
		for _, other := range []string{msg + " ", msg[:len(msg)-1], "x" + msg[1:]} {
			if _, ok := catalogueIndex[other]; !ok && msgTable.find([]byte(other)) != nil {
				t.Fatalf("msgTable.find(%q) found entries of an uncatalogued message", other)
			}
		}
	}
}

// TestEventFields: every name the catalogue's keys may map is a field of
// spec.Event, and setField fills each one in.
func TestEventFields(t *testing.T) {
	values := map[string]string{"Epoch": "3", "Checkpoint": "42", "NextRetry": "5", "Span": "{table_id:5,start_key:61,end_key:62}",
		"Tables": "[1,2]", "Dropped": "[1]", "Added": "[2]", "BootstrapDone": "true", "Accepted": "true", "RemovalOnly": "true",
		"Removed": "true", "Merge": "true", "SyncPoint": "true", "Influence": "All"}
	for id, name := range eventFields[1:] {
		t.Run(name, func(t *testing.T) {
			sf, ok := reflect.TypeOf(spec.Event{}).FieldByName(name)
			require.True(t, ok, "spec.Event has no field %s", name)
			v, ok := values[name]
			if !ok {
				v = "x"
			}
			var ev spec.Event
			setField(&ev, eventField(id+1), []byte(v), "", -1, new(names))
			assert.False(t, reflect.ValueOf(ev).FieldByIndex(sf.Index).IsZero(), "setField left %s unset from %q", name, v)
		})
	}
}

// TestOwnLinesFromLogLines: each of cdcspec's own lines (spec.LogLines
// with TiCDC == false) has exactly one catalogue entry, derived from
// spec.LogLines (ownEntries), so the catalogue cannot drift from what impl/
// logs; TiCDC's lines of spec.LogLines are read by the table's entry.
func TestOwnLinesFromLogLines(t *testing.T) {
	for _, ll := range spec.LogLines() {
		es := catalogueIndex[ll.Message]
		var mine []*entry
		for _, e := range es {
			if slices.Contains(e.files, ll.File) {
				mine = append(mine, e)
			}
		}
		require.Len(t, mine, 1, "%s %q: want one catalogue entry (TestCatalogueMapsEveryLogLine checks its kind)", ll.File, ll.Message)
		assert.Equal(t, !ll.TiCDC, mine[0].ownLine, "%q: own line (no impossible-value check) iff TiCDC == false", ll.Message)
		if !ll.TiCDC {
			assert.Equal(t, ll.Fields, mine[0].keys, "%q: keys are spec.LogLines'", ll.Message)
		}
	}
}

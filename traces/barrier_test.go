package traces

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/sim"
	"cdcspec/spec"
)

// TestTiCDCBarrierLines reads the barrier's lines as TiCDC HEAD writes
// them: the block event's syncPoint and blockedType, the writer's
// barrierType, the action as its proto text and innerAction number (proto3
// omits Write and IsSyncPoint:false), and the resend task's identifier.
func TestTiCDCBarrierLines(t *testing.T) {
	cases := []struct{ line, want string }{
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [barrier_event.go:130] ["new block event is created"] [changefeedID=cf] [dispatcher=11.22] [blockTs=463424440748738003] [syncPoint=true] [needSchedule=false] [mode=0] [blockedType=All] [blockedTableCount=0] [blockedSchemaID=0] [dropType=All] [dropTableCount=0] [dropSchemaID=0] [addTableCount=0] [schemaChangeCount=0] [routeAdmissionCount=0]`,
			"block-event-created cf=cf dispatcher=11.22 influence=all checkpoint=463424440748738003 syncpoint"},
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [barrier_event.go:294] ["all dispatcher reported heartbeat, schedule it, and select one to write"] [changefeed=cf] [dispatcher=11.22] [commitTs=463424440748738003] [barrierType=Normal] [mode=0]`,
			"block-writer-selected cf=cf dispatcher=11.22 influence=normal checkpoint=463424440748738003"},
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [basic_dispatcher.go:827] ["pending event get the action"] [dispatcher=11.22] [mode=0] [action="action:Pass CommitTs:463424440748738003 IsSyncPoint:true "] [innerAction=1] [pendingEventCommitTs=463424440748738003]`,
			"block-action-received dispatcher=11.22 checkpoint=463424440748738003 state=pass syncpoint"},
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [basic_dispatcher.go:827] ["pending event get the action"] [dispatcher=11.22] [mode=0] [action="CommitTs:463424440748738003 "] [innerAction=0] [pendingEventCommitTs=463424440748738003]`,
			"block-action-received dispatcher=11.22 checkpoint=463424440748738003 state=write"},
		{`[2026/07/22 16:30:15.758 +00:00] [INFO] [basic_dispatcher.go:827] ["pending event get the action"] [dispatcher=11.22] [action="action:Pass CommitTs:5 "]`,
			"block-action-received dispatcher=11.22 checkpoint=5 state=pass"},
	}
	for _, c := range cases {
		items := parseItems(t, []byte(c.line))
		require.Len(t, items, 1, c.line)
		assert.Equal(t, c.want, items[0].Event.String(), c.line)
	}
	set := `[2026/07/22 16:30:15.758 +00:00] [INFO] [helper.go:50] ["set resend task"] [identifier="{\"CommitTs\":463424440748738003,\"IsSyncPoint\":true}"] [taskDispatcherID=11.22]`
	items := parseItems(t, []byte(set))
	require.Len(t, items, 1)
	assert.Equal(t, SymBlockWaiting, items[0].Sym)
	assert.Equal(t, "11.22", items[0].OpID)
	assert.EqualValues(t, 463424440748738003, items[0].Event.Checkpoint)
	assert.True(t, items[0].Event.SyncPoint)
	for _, s := range []string{`CommitTs:7 IsSyncPoint:false`, `{CommitTs:7}`, `{"IsSyncPoint":false,"CommitTs":7}`, `7`} {
		cancel := fmt.Sprintf(`[2026/07/22 16:30:15.758 +00:00] [INFO] [basic_dispatcher.go:1216] ["cancel resend task"] [dispatcherID=11.22] [identifier=%q]`, s)
		items := parseItems(t, []byte(cancel))
		require.Len(t, items, 1)
		assert.EqualValues(t, 7, items[0].Event.Checkpoint, s)
		assert.False(t, items[0].Event.SyncPoint, s)
	}
}

// TestDDLScheduledOutOfOrder: one maintainer schedules the table changes
// of DDLs in commitTs order; a change below one already scheduled is
// table-set-follows-ddls, suspect (#3443). A new maintainer (it replays
// from its bootstrap) and the redo barrier (another mode) start their own
// order.
func TestDDLScheduledOutOfOrder(t *testing.T) {
	const tsf = string(spec.TableSetFollowsDDLs)
	remove := func(ms int, ts int, mode int) string {
		return headLine(ms, "INFO", "barrier_event.go:324", "remove table", fmt.Sprintf("[changefeed=cf] [commitTs=%d] [table=\"[5]\"] [mode=%d]", ts, mode))
	}
	add := func(ms int, ts int, mode int) string {
		return headLine(ms, "INFO", "barrier_event.go:339", "add new table", fmt.Sprintf("[commitTs=%d] [changefeed=cf] [schema=2] [table=6] [mode=%d]", ts, mode))
	}
	restart := headLine(1500, "INFO", "maintainer.go:277", "changefeed maintainer started", "[changefeedID=default/cf] [nodeID=n2] [checkpointTs=90]")
	cases := []struct {
		name, text, want string
	}{
		{"in order", remove(1000, 100, 0) + add(1000, 100, 0) + add(2000, 200, 0), ""},
		{"out of order", add(1000, 200, 0) + remove(2000, 100, 0), "suspect"},
		{"after a maintainer restart", add(1000, 200, 0) + restart + remove(2000, 100, 0), ""},
		{"the redo barrier", add(1000, 200, 0) + remove(2000, 100, 1), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := runText(t, c.text, Options{})
			assert.Equal(t, c.want, severities(rep, tsf), "%+v", rep.Findings)
			if c.want != "" {
				f := findingsOf(rep, tsf)[0]
				assert.Contains(t, f.Message, "commitTs 100")
				assert.Contains(t, f.Message, "#3443")
				assert.Len(t, f.Evidence, 2)
			}
		})
	}
}

// TestBlockStatusWaitingStuck: cdcspec's block-status lines. A dispatcher
// that reported WAITING and no DONE for longer than --stuck-after is
// barrier-stuck (suspect), insufficient evidence when the logs end sooner
// (unless the quiescence marker came after it: barrier-eventually-passes
// judged it there); DONE for the same event, the dispatcher's removal, its
// manager's close or its node leaving end the wait; a WAITING re-sent
// does not restart it.
func TestBlockStatusWaitingStuck(t *testing.T) {
	status := func(ms int, stage string, ts int) string {
		return headLine(ms, "INFO", "basic_dispatcher.go:1", "dispatcher reported block status",
			fmt.Sprintf("[changefeedID=default/cf] [nodeID=n1] [blockTs=%d] [tableSpan=t1] [blockedTables=\"[1]\"] [dispatcher=d1] [stage=%s] [isSyncPoint=false] [blockedType=Normal]", ts, stage))
	}
	later := headLine(400000, "INFO", "module_node_manager.go:1", "capture joined", "[captureID=n9]")
	removed := headLine(2000, "INFO", "dispatcher_manager.go:1250", "event dispatcher completely stopped, and delete it from event dispatcher manager", "[changefeedID=default/cf] [nodeID=n1] [dispatcherID=d1]")
	closed := headLine(2000, "INFO", "dispatcher_manager.go:1183", "event dispatcher manager closed", "[changefeedID=default/cf] [nodeID=n1]")
	cases := []struct {
		name, text, want string
	}{
		{"stuck", status(1000, "WAITING", 100) + status(200000, "WAITING", 100) + later, "suspect"},
		{"done", status(1000, "WAITING", 100) + status(3000, "DONE", 100) + later, ""},
		{"done for another event", status(1000, "WAITING", 100) + status(3000, "DONE", 90) + later, "suspect"},
		{"removed", status(1000, "WAITING", 100) + removed + later, ""},
		{"manager closed", status(1000, "WAITING", 100) + closed + later, ""},
		{"the logs end too soon", status(1000, "WAITING", 100) + headLine(2000, "INFO", "module_node_manager.go:1", "capture joined", "[captureID=n9]"), "insufficient-evidence"},
		{"judged at the quiescence marker", status(1000, "WAITING", 100) + headLine(2000, "INFO", "sim.go:1", "cluster quiesced", ""), ""},
		{"its node left", status(1000, "WAITING", 100) + headLine(2000, "INFO", "module_node_manager.go:1", "capture left", "[captureID=n1]") + later, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := runText(t, c.text, Options{StuckAfter: 5 * time.Minute})
			assert.Equal(t, c.want, severities(rep, PropBarrierStuck), "%+v", rep.Findings)
			if c.want == string(Suspect) {
				f := findingsOf(rep, PropBarrierStuck)[0]
				assert.Contains(t, f.Message, "dispatcher d1 on node n1 reported WAITING for the DDL at commitTs 100")
				assert.True(t, strings.Contains(f.Message, "6m39s"), f.Message)
			}
		})
	}
}

// cdcspecOwnBarrierLines are the barrier lines impl/ logs that TiCDC does
// not: spec.LogLines' own (TiCDC == false) are read from there; this is
// the rest.
var cdcspecOwnBarrierLines = map[string]string{
	// TiCDC rebuilds the block events from the bootstrap responses without
	// a line of its own (handleBootstrapResponse); each then logs "new
	// block event is created".
	"restore block event from bootstrap response": "barrier.go",
}

// TestImplBarrierLinesAreHEADs: every line cdcspec's implementation logs
// from the barrier's and the dispatchers' files in seeded simulations with
// blocking DDLs (at DEBUG) is TiCDC HEAD's message from the same file (the
// pinned list), a canonical line of spec.LogLines, or one of
// cdcspecOwnBarrierLines; and every barrier event kind is logged and read
// back by the catalogue.
func TestImplBarrierLinesAreHEADs(t *testing.T) {
	head := map[string]bool{}
	for _, r := range readHeadMessages(t) {
		head[r.msg] = true
	}
	canonical := map[string]string{}
	for _, ll := range spec.LogLines() {
		canonical[ll.Message] = ll.File
	}
	barrierFiles := map[string]bool{"barrier.go": true, "barrier_event.go": true, "basic_dispatcher.go": true, "helper.go": true}
	seen := map[string]int{}
	kinds := map[spec.Kind]int{}
	for seed := uint64(1); seed <= 12; seed++ {
		var log bytes.Buffer
		sim.RunChaos(sim.ChaosConfig{Seed: seed, Steps: 30, BlockingDDLs: true, Log: &log, LogLevel: "debug"})
		sc := newBytesScanner(log.Bytes())
		for r := sc.Next(); r != nil; r = sc.Next() {
			file := string(r.File)
			if !barrierFiles[file] {
				continue
			}
			msg := string(r.Msg)
			seen[file+" "+msg]++
			if e := lookup(r); e != nil && e.kind != spec.KindUnknown {
				kinds[e.kind]++
			}
			switch {
			case canonical[msg] == file, cdcspecOwnBarrierLines[msg] == file:
			case head[msg]:
				es := catalogueIndex[msg]
				assert.NotEmpty(t, es, "%s %q: a HEAD message the catalogue does not know", file, msg)
				for _, e := range es {
					assert.Contains(t, e.files, file, "%q is catalogued for %v, impl logs it from %s", msg, e.files, file)
				}
			default:
				t.Errorf("%s %q: impl logs a barrier line that is neither TiCDC HEAD's nor cdcspec's own", file, msg)
			}
		}
	}
	for _, k := range []spec.Kind{spec.BlockStatusReported, spec.BlockEventCreated, spec.BlockWriterSelected, spec.BlockActionReceived, spec.BlockEventDone} {
		assert.Positive(t, kinds[k], "no %s line read back", k)
	}
	t.Logf("barrier lines: %v", seen)
}

package traces

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

func runText(t *testing.T, text string, opt Options) *Report {
	t.Helper()
	rep, err := Run([]Input{{Name: "x.log", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(text)), nil
	}}}, opt)
	require.NoError(t, err)
	return rep
}

// TestSeedLogsCombined: the seed logs of #5709 (seed 000) and #3952 (seed
// 001), every capture's lines in one file as users paste them, give each
// seed's property: error-never-dropped and running-maintainer-bootstrapped.
// The #3952 maintainer's node is not logged and the combined file names
// several captures as its own, so the removal-only maintainer is matched by
// changefeed (suspect).
func TestSeedLogsCombined(t *testing.T) {
	var all bytes.Buffer
	for _, f := range []string{"testdata/seed000_5709.log", "testdata/seed001_3952.log", "testdata/seed001_3952_combined.log"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		all.Write(b)
		all.WriteByte('\n')
	}
	rep := runText(t, all.String(), Options{})
	rmb := findingsOf(rep, string(spec.RunningMaintainerBootstrapped))
	require.Len(t, rmb, 1)
	assert.Contains(t, []Severity{Violation, Suspect}, rmb[0].Severity)
	assert.Contains(t, rmb[0].Message, "removal-only maintainer")
	assert.Contains(t, rmb[0].Evidence[0].Text, `checkpointTs=1`)
	end := findingsOf(rep, string(spec.ErrorNeverDropped))
	require.NotEmpty(t, end)
	sev := end[0].Severity
	assert.Contains(t, []Severity{Violation, Suspect}, sev)
}

func headLine(ms int, level, caller, msg, fields string) string {
	return fmt.Sprintf("[2026/07/22 16:%02d:%02d.%03d +00:00] [%s] [%s] [%q] %s\n", ms/60000%60, ms/1000%60, ms%1000, level, caller, msg, fields)
}

// TestBootstrapFailure4509: "can not determine the startTs from the
// bootstrap response" (#4509) with no later bootstrap is bootstrap-failed,
// suspect once the logs run past --stuck-after.
func TestBootstrapFailure4509(t *testing.T) {
	text := headLine(0, "INFO", "maintainer.go:1151", "changefeed maintainer bootstrapped", "[changefeedID=default/cf-a]") +
		headLine(1000, "ERROR", "maintainer_controller_bootstrap.go:95", "can not determine the startTs from the bootstrap response", `[changefeed=cf-b] [error="[CDC:ErrX]all responses empty"]`) +
		headLine(400000, "INFO", "maintainer.go:461", "changefeed bootstrap initial nodes", "[selfNodeID=n1] [changefeedID=default/cf-a] [nodeCount=1]")
	rep := runText(t, text, Options{})
	fs := findingsOf(rep, PropBootstrapFailed)
	require.Len(t, fs, 1)
	assert.Equal(t, Suspect, fs[0].Severity)
	assert.Contains(t, fs[0].Message, "can not determine the startTs")
	assert.Equal(t, "cf-b", fs[0].Changefeed)
	// with a later successful bootstrap of the same changefeed: info
	text += headLine(401000, "INFO", "maintainer.go:1151", "changefeed maintainer bootstrapped", "[changefeedID=cf-b]")
	fs = findingsOf(runText(t, text, Options{}), PropBootstrapFailed)
	require.Len(t, fs, 1)
	assert.Equal(t, Info, fs[0].Severity)
}

// TestImpossibleValues: a line that reports a checkpoint or start ts of 0,
// -1 or MaxUint64 is impossible-value (one finding per line kind, with a
// count); checkpointTs=1 of a removal-only maintainer is not.
func TestImpossibleValues(t *testing.T) {
	text := headLine(0, "INFO", "maintainer.go:277", "changefeed maintainer started", "[changefeedID=default/cf] [checkpointTs=1]") +
		headLine(10, "INFO", "maintainer.go:277", "changefeed maintainer started", "[changefeedID=default/cf] [checkpointTs=0]") +
		headLine(20, "INFO", "maintainer.go:277", "changefeed maintainer started", "[changefeedID=default/cf] [checkpointTs=0]") +
		headLine(30, "INFO", "dispatcher_manager.go:661", "new dispatcher created", "[changefeedID=default/cf] [dispatcherID=7] [tableSpan=\"tableID: 5\"] [startTs=18446744073709551615]") +
		headLine(40, "ERROR", "maintainer_manager_maintainers.go:300", "ignore add maintainer request with invalid checkpointTs", "[changefeedID=default/cf] [checkpointTs=0]")
	rep := runText(t, text, Options{})
	fs := findingsOf(rep, PropImpossibleValue)
	require.Len(t, fs, 3, "%+v", fs)
	byMsg := map[string]Finding{}
	for _, f := range fs {
		byMsg[f.Symptom] = f
	}
	assert.EqualValues(t, 2, byMsg["changefeed maintainer started"].Count)
	assert.Contains(t, byMsg["changefeed maintainer started"].Message, "checkpointTs=0")
	assert.Contains(t, byMsg["new dispatcher created"].Message, "startTs=18446744073709551615")
	assert.Equal(t, Suspect, byMsg["ignore add maintainer request with invalid checkpointTs"].Severity)
}

// TestBarrierStuck: the maintainer's "barrier event is not resolved"
// warnings for one block event over more than --stuck-after, and a
// dispatcher re-sending its WAITING status that long, are barrier-stuck;
// a block event resolved within the threshold is no finding.
func TestBarrierStuck(t *testing.T) {
	var b strings.Builder
	b.WriteString(headLine(0, "INFO", "barrier_event.go:130", "new block event is created", "[changefeedID=cf] [dispatcher=d1] [blockTs=100]"))
	b.WriteString(headLine(0, "INFO", "helper.go:50", "set resend task", "[identifier={CommitTs:100}] [taskDispatcherID=d1]"))
	for i := 1; i <= 40; i++ {
		b.WriteString(headLine(i*10000, "WARN", "barrier_event.go:676", "barrier event is not resolved", "[changefeed=cf] [commitTs=100] [isSyncPoint=false]"))
		if i%5 == 0 {
			b.WriteString(headLine(i*10000, "INFO", "helper.go:379", "resend task periodic resend", fmt.Sprintf("[dispatcherID=d1] [executeCount=%d]", i*2)))
		}
	}
	// a second block event resolved after 12 s
	b.WriteString(headLine(500000, "INFO", "barrier_event.go:130", "new block event is created", "[changefeedID=cf] [dispatcher=d2] [blockTs=200]"))
	b.WriteString(headLine(510000, "WARN", "barrier_event.go:676", "barrier event is not resolved", "[changefeed=cf] [commitTs=200]"))
	b.WriteString(headLine(512000, "INFO", "barrier.go:570", "all dispatchers reported event done, remove event", "[changefeed=cf] [commitTs=200]"))
	// a dispatcher whose resend task ran past the threshold but was
	// cancelled: the block event was resolved
	b.WriteString(headLine(513000, "INFO", "helper.go:50", "set resend task", "[identifier={CommitTs:300}] [taskDispatcherID=d3]"))
	b.WriteString(headLine(813000, "INFO", "helper.go:379", "resend task periodic resend", "[dispatcherID=d3] [executeCount=70]"))
	b.WriteString(headLine(820000, "INFO", "basic_dispatcher.go:1216", "cancel resend task", "[dispatcherID=d3] [identifier={CommitTs:300}]"))
	rep := runText(t, b.String(), Options{StuckAfter: 5 * time.Minute})
	assert.EqualValues(t, 1, rep.Coverage.Symptoms[SymBlockDone.String()], "the cancel line is read as the end of the WAITING status")
	fs := findingsOf(rep, PropBarrierStuck)
	var stuck, other, disp int
	for _, f := range fs {
		switch {
		case f.Severity == Suspect && strings.Contains(f.Message, "dispatcher d1"):
			disp++
			assert.Contains(t, f.Message, "6m40s")
		case f.Severity == Suspect:
			stuck++
			assert.Contains(t, f.Message, "40 time(s)")
			assert.Contains(t, f.Message, "commitTs 100")
		default:
			other++
		}
	}
	assert.Equal(t, []int{1, 1, 0}, []int{stuck, disp, other}, "%+v", fs)
}

// TestFindingsAggregated: an error storm of one internal error and failed
// sends becomes one finding per (property, changefeed, node, symptom) with
// a count, the first and last time, and capped evidence.
func TestFindingsAggregated(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString(headLine(i*100, "ERROR", "helper.go:200", "add dispatcher to dynamic stream failed", fmt.Sprintf("[changefeedID=default/cf-%d] [error=boom]", i%2)))
		b.WriteString(headLine(i*100, "ERROR", "heartbeat_collector.go:150", "failed to send heartbeat messages", "[error=\"connection refused\"]"))
	}
	rep := runText(t, b.String(), Options{})
	ie := findingsOf(rep, PropInternalError)
	require.Len(t, ie, 2)
	for _, f := range ie {
		assert.EqualValues(t, 250, f.Count)
		assert.Len(t, f.Evidence, maxEvidence)
		assert.NotEmpty(t, f.First)
		assert.NotEmpty(t, f.Last)
	}
	sf := findingsOf(rep, PropSendFailed)
	require.Len(t, sf, 1)
	assert.EqualValues(t, 500, sf[0].Count)
	assert.Equal(t, Info, sf[0].Severity)
	var out bytes.Buffer
	rep.WriteText(&out)
	assert.Contains(t, out.String(), "(500 times, 2026/07/22 16:00:00.000 to 2026/07/22 16:00:49.900)")
}

package traces

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runLogs checks one or more in-memory logs (one per capture).
func runLogs(t *testing.T, logs ...string) *Report {
	t.Helper()
	var ins []Input
	for i, l := range logs {
		ins = append(ins, stringInput("cap"+fmtInt(i+1)+".log", strings.TrimLeft(l, "\n")))
	}
	rep, err := Run(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func severities(rep *Report, prop string) string {
	var out []string
	for _, f := range findingsOf(rep, prop) {
		out = append(out, string(f.Severity))
	}
	return strings.Join(out, ",")
}

const n1 = "6a3e0b8e-7c1d-4e8a-9c4e-5b2f0d9a0001"

// An add operator whose destination left before it finished was canceled:
// TiCDC logs "operator finished" all the same, and nothing is replicating.
func TestCanceledAddIsNotAViolation(t *testing.T) {
	log := `
[2026/03/02 10:00:00.000 +00:00] [INFO] [maintainer.go:461] ["changefeed bootstrap initial nodes"] [selfNodeID=` + n1 + `] [changefeedID=default/other] [nodeCount=2]
[2026/03/02 10:00:01.000 +00:00] [INFO] [operator_controller.go:537] ["add operator to running queue"] [role=coordinator] [operator="add maintainer operator: default/cf, dest:n-9"]
[2026/03/02 10:00:02.000 +00:00] [INFO] [controller.go:507] ["controller detects node changed"] [addedCount=0] [removedCount=1] [addedNodes="[]"] [removedNodes="[n-9]"]
[2026/03/02 10:00:02.100 +00:00] [INFO] [operator_controller.go:517] ["operator finished"] [role=coordinator] [operator=default/cf] [operator="add maintainer operator: default/cf, dest:n-9"]
`
	rep := runLogs(t, log)
	if s := severities(rep, "running-maintainer-bootstrapped"); s != "" {
		t.Fatalf("canceled add reported: %s\n%+v", s, rep.Findings)
	}
	// Without the node leaving, the same lines show an add that finished
	// where no maintainer was ever seen: an absence, at most suspect.
	rep = runLogs(t, strings.Replace(log, `["controller detects node changed"]`, `["server change detected"]`, 1))
	if s := severities(rep, "running-maintainer-bootstrapped"); s != "insufficient-evidence" {
		t.Fatalf("got %q\n%+v", s, rep.Findings)
	}
}

// Coordinator backoff lines carry the checkpoint: a lower one later is a
// suspected regression, the same one for longer than --stuck-after a
// suspected stuck checkpoint.
func TestBackoffCheckpoints(t *testing.T) {
	line := func(tm, cp string) string {
		return `[2026/03/02 ` + tm + ` +00:00] [WARN] [backoff.go:242] ["changefeed meets an error, will be stopped"] [changefeed=default/cf] [checkpointTs=` + cp + `] [nextRetryTime=2026/03/02 10:00:10.000 +00:00] [error="[{\"code\":\"CDC:ErrKafkaAsyncSendMessage\"}]"]` + "\n"
	}
	rep := runLogs(t, line("10:00:00.000", "463424440748738003")+line("10:10:00.000", "463424440748738003")+line("10:20:00.000", "463424440748730000"))
	if s := severities(rep, "checkpoint-stuck"); s != "suspect" {
		t.Errorf("checkpoint-stuck: %q", s)
	}
	if s := severities(rep, "checkpoint-monotonic"); s != "suspect" {
		t.Errorf("checkpoint-monotonic: %q", s)
	}
	if rep.Violations() != 0 {
		t.Errorf("backoff lines alone are no violation: %+v", rep.Findings)
	}
}

// A failed bootstrap that a retry repairs is context, not a suspicion.
func TestBootstrapRetried(t *testing.T) {
	rep := runLogs(t, `
[2026/04/02 08:00:00.800 +00:00] [WARN] [maintainer.go:1036] ["maintainer bootstrap failed"] [changefeedID=default/cf] [error="[CDC:ErrSnapshotLostByGC]snapshot lost"]
[2026/04/02 08:00:30.000 +00:00] [INFO] [maintainer.go:1151] ["changefeed maintainer bootstrapped"] [changefeedID=default/cf]
[2026/04/02 08:30:00.000 +00:00] [INFO] [maintainer.go:621] ["maintainer node changed"] [changefeedID=default/cf] [addedCount=0] [removedCount=0]
`)
	if s := severities(rep, "bootstrap-failed"); s != "info" {
		t.Fatalf("got %q", s)
	}
}

// Two captures' logs: a dispatcher moved from cap2 to cap1. cap1's clock is
// 500 ms behind, so the new dispatcher's creation sorts before the old one's
// removal. That is clock skew, not a duplicate: at most a suspicion.
func TestCrossCaptureSkewIsSuspectOnly(t *testing.T) {
	span := `tableSpan="tableID: 21, startKey: 74800000000000001500, endKey: 74800000000000001600, keyspaceID: 0"`
	cap1 := `
[2026/03/02 10:05:00.000 +00:00] [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf] [dispatcherID=3002] [` + span + `] [startTs=1]
`
	cap2 := `
[2026/03/02 10:00:00.000 +00:00] [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf] [dispatcherID=2002] [` + span + `] [startTs=1]
[2026/03/02 10:05:00.400 +00:00] [INFO] [dispatcher_manager.go:1250] ["event dispatcher completely stopped, and delete it from event dispatcher manager"] [changefeedID=default/cf] [dispatcherID=2002]
`
	rep := runLogs(t, cap1, cap2)
	if s := severities(rep, "at-most-one-dispatcher-per-span"); s != "suspect" {
		t.Fatalf("got %q\n%+v", s, rep.Findings)
	}
	// In one capture's log the order is trusted: the same lines are a violation.
	rep = runLogs(t, cap2[:strings.Index(cap2, "[2026/03/02 10:05")]+strings.TrimLeft(cap1, "\n")+cap2[strings.Index(cap2, "[2026/03/02 10:05"):])
	if s := severities(rep, "at-most-one-dispatcher-per-span"); s != "violation" {
		t.Fatalf("single log: got %q\n%+v", s, rep.Findings)
	}
}

// An error raised while the changefeed is already in the backoff ends with
// the stop the backoff ordered: no finding.
func TestErrorDuringRestartIsNotDropped(t *testing.T) {
	rep := runLogs(t, `
[2026/01/01 00:00:17.105 +00:00] [ERROR] [maintainer.go:940] ["dispatcher report an error"] [changefeedID=default/cf1] [sourceNode=n2] [error="boom"]
[2026/01/01 00:00:17.200 +00:00] [ERROR] [backoff.go:180] ["changefeed maintainer report an error"] [changefeed=default/cf1] [checkpointTs=5] [node=n2] [state=warning] [error="boom"]
[2026/01/01 00:00:17.274 +00:00] [ERROR] [maintainer.go:940] ["dispatcher report an error"] [changefeedID=default/cf1] [sourceNode=n1] [error="boom"]
[2026/01/01 00:00:17.675 +00:00] [INFO] [dispatcher_manager.go:1065] ["closing event dispatcher manager"] [changefeedID=default/cf1]
`)
	if len(findingsOf(rep, "error-never-dropped")) != 0 {
		t.Fatalf("%+v", rep.Findings)
	}
}

// TestSkewSettleAcrossBatches: a finding held for the clock-skew tolerance
// is settled by a line that comes many parse chunks later; the item it was
// raised on must still be the one it names (a chunk's items are reused
// once the checker has consumed them).
func TestSkewSettleAcrossBatches(t *testing.T) {
	span := `tableSpan="tableID: 21, startKey: 74800000000000001500, endKey: 74800000000000001600, keyspaceID: 0"`
	var cap1 strings.Builder
	cap1.WriteString(`[2026/03/02 10:05:00.000 +00:00] [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf] [dispatcherID=3002] [` + span + `] [startTs=1]` + "\n")
	for i := 0; i < 20*chunkSize/100; i++ { // 20 chunks of lines of about 130 bytes
		fmt.Fprintf(&cap1, "[2026/03/02 10:05:00.100 +00:00] [INFO] [helper.go:379] [\"resend task periodic resend\"] [dispatcherID=%d] [executeCount=10]\n", 5000+i)
	}
	cap2 := `
[2026/03/02 10:00:00.000 +00:00] [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf] [dispatcherID=2002] [` + span + `] [startTs=1]
[2026/03/02 10:05:00.400 +00:00] [INFO] [dispatcher_manager.go:1250] ["event dispatcher completely stopped, and delete it from event dispatcher manager"] [changefeedID=default/cf] [dispatcherID=2002]
`
	rep := runLogs(t, cap1.String(), cap2)
	fs := findingsOf(rep, "at-most-one-dispatcher-per-span")
	if len(fs) != 1 || fs[0].Severity != Suspect || !strings.Contains(fs[0].Message, "removed 400ms later") {
		t.Fatalf("want one suspect naming the removal 400ms after the creation: %+v", fs)
	}
}

// TestSortedKeysBy: the struct keys are walked in the order of the string
// keys they replaced ("changefeed|OpID", "role|changefeed|dispatcher"),
// which is not the order of their fields ("a-b|" and "c|cf|" sort before
// "a|" and "c|c|": '-' and 'f' sort before '|').
func TestSortedKeysBy(t *testing.T) {
	m := map[cfOp]int{{"a", "x"}: 1, {"a-b", "y"}: 2, {"a", "w"}: 3, {"", "z"}: 4}
	require.Equal(t, []cfOp{{"a-b", "y"}, {"a", "w"}, {"a", "x"}, {"", "z"}}, sortedKeysBy(m))
	ops := map[opRef]bool{{'m', "cf", "d2"}: true, {'c', "cf", ""}: true, {'m', "cf", "d1"}: true, {'c', "c", "x"}: true}
	require.Equal(t, []opRef{{'c', "cf", ""}, {'c', "c", "x"}, {'m', "cf", "d1"}, {'m', "cf", "d2"}}, sortedKeysBy(ops))
}

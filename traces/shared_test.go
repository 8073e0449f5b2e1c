package traces

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// logLines joins log lines written as "HH:MM:SS.mmm rest", all on one day.
func logLines(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("[2026/03/02 " + l[:12] + " +00:00]" + l[12:] + "\n")
	}
	return b.String()
}

// The changefeed is created ten minutes before the error: an error right
// after a creation (or any handling line) is taken for one the backoff's stop
// will clear.
const (
	lineCreated   = `09:50:00.000 [INFO] [changefeed.go:90] ["changefeed instance created"] [id=default/cf] [checkpointTs=100] [tables="[1]"] [state=normal]`
	lineDMError   = `10:00:01.000 [ERROR] [dispatcher_manager.go:700] ["Event Dispatcher Manager Meets Error"] [changefeedID=default/cf] [nodeID=n1] [error="[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed"]`
	lineReported  = `10:00:02.000 [ERROR] [maintainer.go:940] ["dispatcher report an error"] [changefeedID=default/cf] [nodeID=n0] [sourceNode=n1] [error="[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed"]`
	lineStatusErr = `10:00:03.000 [DEBUG] [controller.go:1] ["coordinator received maintainer status"] [changefeed=default/cf] [node=n0] [statusMaintainerEpoch=2] [checkpointTs=200] [state=working] [error="[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed"] [bootstrapDone=true] [accepted=true]`
	lineStored    = `10:00:03.000 [DEBUG] [etcd_backend.go:1] ["update changefeed checkpointTs"] [changefeed=default/cf] [checkpointTs=200]`
	lineDMClosed  = `10:02:00.000 [INFO] [dispatcher_manager.go:1183] ["event dispatcher manager closed"] [changefeedID=default/cf] [nodeID=n1]`
)

// An error in a status whose checkpoint advanced is ignored by design
// (Backoff.CheckStatus): the episode is handled, as spec.ErrorHandling says,
// when the log shows the stored checkpoint advance.
func TestErrorEpisodeHandledByProgress(t *testing.T) {
	for name, progress := range map[string]string{"stored checkpoint": lineStored} {
		t.Run(name, func(t *testing.T) {
			rep := runLogs(t, logLines(lineCreated, lineDMError, lineReported, lineStatusErr, progress, lineDMClosed))
			assert.Empty(t, severities(rep, "error-never-dropped"), "%+v", rep.Findings)
		})
	}
	// Without a line showing progress, two minutes with no backoff line
	// past the 60 s window is suspect.
	rep := runLogs(t, logLines(lineCreated, lineDMError, lineReported, lineStatusErr, lineDMClosed))
	assert.Equal(t, "suspect", severities(rep, "error-never-dropped"))
}

// The error's dispatcher manager died with its node: nothing re-sends the
// error, so the episode ends there (within the window: no suspicion).
func TestErrorEpisodeEndsWithItsSource(t *testing.T) {
	suicide := `10:00:04.000 [ERROR] [server.go:152] ["cdc server exits with error"] [captureID=n1] [error="[CDC:ErrCaptureSuicide]capture suicide"]`
	later := `10:05:00.000 [INFO] [module_node_manager.go:1] ["capture joined"] [captureID=n2]`
	rep := runLogs(t, logLines(lineCreated, lineDMError, lineReported, suicide, later))
	assert.Equal(t, "insufficient-evidence", severities(rep, "error-never-dropped"), "%+v", rep.Findings)
	rep = runLogs(t, logLines(lineCreated, lineDMError, lineReported, later))
	assert.Equal(t, "suspect", severities(rep, "error-never-dropped"), "%+v", rep.Findings)
}

// #6202's marker: the new maintainer ignored a working dispatcher of table 1.
// A later dispatcher for the table is a duplicate only if the ignored one
// still lives; the log-only suspicion is for logs that never showed it.
func TestIgnoredTableMarker(t *testing.T) {
	d2 := `10:00:01.000 [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf] [nodeID=n1] [dispatcherID=d2] [tableSpan=t1] [startTs=100]`
	marker := `10:00:02.000 [WARN] [maintainer_controller_bootstrap.go:384] ["found a working table that is not in initial table map, just ignore it"] [changefeed=default/cf] [tableID=1]`
	removed := `10:00:03.000 [INFO] [dispatcher_manager.go:1250] ["event dispatcher completely stopped, and delete it from event dispatcher manager"] [changefeedID=default/cf] [nodeID=n1] [dispatcherID=d2]`
	d4 := `10:00:04.000 [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf] [nodeID=n0] [dispatcherID=d4] [tableSpan=t1] [startTs=100]`
	const amo = "at-most-one-dispatcher-per-span"
	rep := runLogs(t, logLines(lineCreated, d2, marker, removed, d4))
	assert.Empty(t, severities(rep, amo), "the ignored dispatcher was removed: %+v", rep.Findings)
	rep = runLogs(t, logLines(lineCreated, d2, marker, d4))
	assert.Equal(t, "violation", severities(rep, amo), "%+v", rep.Findings)
	rep = runLogs(t, logLines(lineCreated, marker, d4))
	assert.Equal(t, "suspect", severities(rep, amo), "the log never showed the ignored dispatcher: %+v", rep.Findings)
}

// With the coordinator's DEBUG lines in the log, a missing stored-checkpoint
// line means none was stored: checkpoint-advances-after-heal is judged.
func TestCheckpointAfterHealWithDebugLines(t *testing.T) {
	status := `10:00:01.000 [DEBUG] [controller.go:1] ["coordinator received maintainer status"] [changefeed=default/cf] [node=n0] [statusMaintainerEpoch=2] [checkpointTs=100] [state=working] [error=] [bootstrapDone=true] [accepted=true]`
	d1 := `10:00:02.000 [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf] [nodeID=n1] [dispatcherID=d1] [tableSpan=t1] [startTs=100]`
	working := `10:00:03.000 [INFO] [basic_dispatcher.go:540] ["update dispatcher status to working"] [changefeedID=default/cf] [nodeID=n1] [dispatcher=d1] [table=t1]`
	healed := `10:00:04.000 [INFO] [sim.go:1] ["all faults healed"] [resolvedTs=200]`
	quiesced := `10:01:00.000 [INFO] [sim.go:1] ["cluster quiesced"]`
	const caah = "checkpoint-advances-after-heal"
	rep := runLogs(t, logLines(lineCreated, status, d1, working, healed, quiesced))
	assert.Equal(t, "violation", severities(rep, caah), "%+v", rep.Findings)
	rep = runLogs(t, logLines(lineCreated, d1, working, healed, quiesced))
	assert.Equal(t, "insufficient-evidence", severities(rep, caah), "%+v", rep.Findings)
}

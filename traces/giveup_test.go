package traces

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestErrorStuckFails: with --error-stuck-duration the log checker runs
// error-stuck-fails over the backoff's restart lines: a restart 31 minutes
// after the first of its streak, with a 30-minute budget, is a violation;
// a coordinator's bootstrap in between restarts the budget, as HEAD's
// NewBackoff does; without the option nothing is checked.
func TestErrorStuckFails(t *testing.T) {
	restart := func(ms int) string {
		return headLine(ms, "WARN", "backoff.go:242", "changefeed meets an error, will be stopped",
			`[changefeed=default/cf] [checkpointTs=100] [error="[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed"]`)
	}
	streak := restart(0) + restart(10_000) + restart(31*60_000)
	opt := Options{ErrorStuckDuration: 30 * time.Minute}
	got := findingsOf(runText(t, streak, opt), string(spec.ErrorStuckFails))
	require.Len(t, got, 1)
	require.Equal(t, Violation, got[0].Severity)
	require.Contains(t, got[0].Message, "past the budget of 1800s")

	bootstrapped := restart(0) + restart(10_000) +
		headLine(20*60_000, "INFO", "controller.go:810", "coordinator bootstrapped", "[nodeID=n2]") + restart(31*60_000)
	require.Empty(t, findingsOf(runText(t, bootstrapped, opt), string(spec.ErrorStuckFails)))
	require.Empty(t, findingsOf(runText(t, streak, Options{}), string(spec.ErrorStuckFails)))
}

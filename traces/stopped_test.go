package traces

import (
	"strings"
	"testing"
)

// stopped-stays-stopped on TiCDC's own lines: a failed changefeed that
// TiCDC reports normal again without a resume is a violation; with the
// API's "resume changefeed successfully" (api/v2/changefeed.go:901 at
// b813e76f9, bare changefeed name) in between it is not.
func TestStoppedStaysStoppedOnHEADLines(t *testing.T) {
	failed := `[2026/03/02 10:00:00.000 +00:00] [INFO] [controller.go:695] ["changefeed status changed"] [changefeed=default/cf] [state=failed] [error="[CDC:ErrGCTTLExceeded]gc"]
`
	normal := `[2026/03/02 10:00:09.000 +00:00] [INFO] [controller.go:695] ["changefeed status changed"] [changefeed=default/cf] [state=normal] [error=<nil>]
`
	resumed := `[2026/03/02 10:00:05.000 +00:00] [INFO] [changefeed.go:901] ["resume changefeed successfully"] [changefeedID=cf] [state=failed] [overwriteCheckpointTs=false]
`
	rep := runLogs(t, failed+normal)
	if s := severities(rep, "stopped-stays-stopped"); !strings.Contains(s, "violation") {
		t.Fatalf("a failed changefeed reported normal without a resume: got %q\n%+v", s, rep.Findings)
	}
	rep = runLogs(t, failed+resumed+normal)
	if s := severities(rep, "stopped-stays-stopped"); s != "" {
		t.Fatalf("a resumed changefeed reported: %s\n%+v", s, rep.Findings)
	}
}

package traces

import (
	"os"
	"runtime/debug"
	"runtime/pprof"
	"testing"
)

// TestProfileRun writes a CPU profile of the whole check (Run) on the log
// file named by CDCSPEC_TRACE_PROFILE_LOG to CDCSPEC_TRACE_PROFILE_OUT:
// the pipeline of `cdcspec trace` on a real-size file, without the
// generator (see scripts/bench-trace.sh for the numbers). Skipped unless
// both are set.
func TestProfileRun(t *testing.T) {
	log, out := os.Getenv("CDCSPEC_TRACE_PROFILE_LOG"), os.Getenv("CDCSPEC_TRACE_PROFILE_OUT")
	if log == "" || out == "" {
		t.Skip("set CDCSPEC_TRACE_PROFILE_LOG and CDCSPEC_TRACE_PROFILE_OUT to profile a run")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// the GC settings of `cdcspec trace`
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(60 << 20))
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	rep, err := Run([]Input{fileInput(log)}, Options{})
	pprof.StopCPUProfile()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stats.Records == 0 {
		t.Fatal("no record parsed")
	}
	t.Logf("%d records, %d findings", rep.Stats.Records, len(rep.Findings))
}

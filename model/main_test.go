package model

import (
	"os"
	"runtime/debug"
	"testing"
)

// testMemoryLimit is the Go runtime's soft memory limit for this package's
// tests, unless GOMEMLIMIT says otherwise. The complete searches keep far
// less alive than the heap grows to under the default GOGC (a run peaked at
// 2.1 GB RSS without it, 1.1 GB with it, in the same time), and issue 13
// bounds `go test ./model` at 1.5 GB. A soft limit only makes the collector
// run sooner; it never fails a test.
const testMemoryLimit = 1 << 30

func TestMain(m *testing.M) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(testMemoryLimit)
	}
	os.Exit(m.Run())
}

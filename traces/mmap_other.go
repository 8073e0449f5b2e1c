//go:build !linux

package traces

import "os"

// mapInput: inputs are mapped on Linux only; elsewhere every input takes
// the reading path.
func mapInput(*os.File) ([]byte, bool) { return nil, false }

func dropPages([]byte) {}

func unmapInput([]byte) {}

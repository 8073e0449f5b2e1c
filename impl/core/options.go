package core

import "cdcspec/spec"

// Legacy switches older behaviour that is not a catalogued bug but that a
// seed scenario needs (the seed ran on a version without that fix).
type Legacy struct {
	// RawWatermarkCheckpoint: before #4548 the maintainer reported its raw
	// watermark (which can go down) and did not clamp a Create's startTs to
	// the committed checkpoint. Seed #5709 needs a regressed report.
	RawWatermarkCheckpoint bool
}

// Options configure every component of a node.
type Options struct {
	// Bugs are the catalogue entries switched on (spec.Bugs); each is read
	// at the decision point its entry's Where names.
	Bugs   spec.BugSet
	Legacy Legacy
	// ErrorStuckDurationMs is changefeed-error-stuck-duration (default 30 min).
	ErrorStuckDurationMs int64
}

// WithDefaults fills zero fields.
func (o Options) WithDefaults() Options {
	if o.ErrorStuckDurationMs == 0 {
		o.ErrorStuckDurationMs = 30 * 60 * 1000
	}
	return o
}

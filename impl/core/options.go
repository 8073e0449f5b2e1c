package core

import (
	"fmt"
	"sort"
	"strings"

	"cdcspec/spec"
)

// Bugs switches catalogued TiCDC bugs (spec.Bugs) back on. Each field is
// read at exactly one decision point, named in its comment; everything else
// runs the fixed logic.
type Bugs struct {
	// regressed-checkpoint-drops-error (#5709): coordinator
	// Changefeed.UpdateStatus drops a regressed status whole, Err included.
	RegressedCheckpointDropsError bool
	// add-accepts-unbootstrapped-maintainer (#3952): coordinator
	// AddMaintainerOperator.Check (and the manager's add handling, pre-#5435)
	// accept any Working report from the destination.
	AddAcceptsUnbootstrappedMaintainer bool
	// restored-create-ignored-for-new-table (#6202): maintainer
	// handleRemainingWorkingTasks only logs a working dispatcher of a table
	// missing from the bootstrap snapshot.
	RestoredCreateIgnoredForNewTable bool
	// inflight-operators-lost-on-failover (#3411): maintainer bootstrap does not
	// restore journaled operators (restoreCurrentWorkingOperators) and
	// handleStatus has no fallback for a terminal status without operator.
	InflightOperatorsLostOnFailover bool
	// stuck-after-upstream-failure (tiflow #9595): the synthetic puller's
	// resolved-ts path after an upstream failure (see impl/upstream).
	StuckAfterUpstreamFailure bool
	// no-epoch-fencing (#5083): dispatcher manager
	// preCheckForSchedulerHandler obeys a request from any maintainer
	// generation.
	NoEpochFencing bool
	// trigger-passes-add-table-ddl (#5401): the table trigger's checkpoint
	// is not capped below an add-table DDL awaiting the maintainer's ACK.
	TriggerPassesAddTableDDL bool
}

// ParseBugs turns catalogue names into Bugs. An unknown name is an error
// that lists the known ones.
func ParseBugs(names []string) (Bugs, error) {
	var b Bugs
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		p := b.field(n)
		if p == nil {
			var known []string
			for _, k := range spec.Bugs() {
				known = append(known, k.Name)
			}
			sort.Strings(known)
			return Bugs{}, fmt.Errorf("unknown bug %q (known: %s)", n, strings.Join(known, ", "))
		}
		*p = true
	}
	return b, nil
}

// Names lists the bugs switched on, in catalogue order.
func (b Bugs) Names() []string {
	var out []string
	for _, k := range spec.Bugs() {
		if p := b.field(k.Name); p != nil && *p {
			out = append(out, k.Name)
		}
	}
	return out
}

func (b *Bugs) field(name string) *bool {
	switch name {
	case "regressed-checkpoint-drops-error":
		return &b.RegressedCheckpointDropsError
	case "add-accepts-unbootstrapped-maintainer":
		return &b.AddAcceptsUnbootstrappedMaintainer
	case "restored-create-ignored-for-new-table":
		return &b.RestoredCreateIgnoredForNewTable
	case "inflight-operators-lost-on-failover":
		return &b.InflightOperatorsLostOnFailover
	case "stuck-after-upstream-failure":
		return &b.StuckAfterUpstreamFailure
	case "no-epoch-fencing":
		return &b.NoEpochFencing
	case "trigger-passes-add-table-ddl":
		return &b.TriggerPassesAddTableDDL
	}
	return nil
}

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
	Bugs   Bugs
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

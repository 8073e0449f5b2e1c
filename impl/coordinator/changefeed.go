package coordinator

import (
	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// SchedState is the ReplicationDB state of a running changefeed.
type SchedState uint8

const (
	Absent SchedState = iota
	Scheduling
	Replicating
)

func (s SchedState) String() string {
	switch s {
	case Scheduling:
		return "scheduling"
	case Replicating:
		return "replicating"
	}
	return "absent"
}

// Progress of the status key (None/Removing/Stopping) lets a new
// coordinator finish a half-done pause or remove.
type Progress int

const (
	ProgressNone     Progress = 1
	ProgressRemoving Progress = 2
	ProgressStopping Progress = 3
)

// ChangeFeedInfo is the info key's content.
type ChangeFeedInfo struct {
	State   string             `json:"state"`
	Error   *core.RunningError `json:"error,omitempty"`
	Epoch   uint64             `json:"epoch"`
	StartTs uint64             `json:"start-ts"`
	Tables  []int64            `json:"tables,omitempty"`
}

// Changefeed is coordinator/changefeed/changefeed.go.
type Changefeed struct {
	ID   core.ChangefeedID
	Info ChangeFeedInfo
	// infoModRev is the info key's mod revision, for CAS (BumpChangefeedEpoch).
	infoModRev int64
	// status is the last accepted MaintainerStatus; its CheckpointTs is the
	// coordinator's view and only grows (UpdateStatus keeps the max).
	status core.MaintainerStatus
	// lastSavedCheckpointTs is the last checkpoint written to etcd.
	lastSavedCheckpointTs uint64
	// isNew: new, or resumed with an overwritten checkpoint.
	isNew bool
	// progress mirrors the status key's Progress.
	progress Progress
	nodeID   core.NodeID
	state    SchedState
	backoff  *Backoff
	opts     *core.Options
	lg       *logging.Logger
}

// Status returns the last accepted status.
func (c *Changefeed) Status() core.MaintainerStatus { return c.status }

// NodeID returns the node the changefeed is bound to ("" when absent).
func (c *Changefeed) NodeID() core.NodeID { return c.nodeID }

// UpdateStatus is the only entry for a maintainer report, in TiCDC's order
// (section A.2): (1) regressed checkpoint, (2) store, (3) checkFailedStatus,
// (4) BootstrapDone toggle, (5) target ts (not modelled), (6) backoff
// CheckStatus. It returns whether the state changed, the new state and the
// error to persist with it.
func (c *Changefeed) UpdateStatus(now int64, s core.MaintainerStatus, out *core.Effects) (bool, string, *core.RunningError) {
	old := c.status
	// 1. Regressed checkpoint.
	if s.CheckpointTs < old.CheckpointTs {
		if c.opts.Bugs.Has(spec.BugRegressedCheckpointDropsError) || len(s.Err) == 0 {
			// Before #5779 the whole status, Err included, was dropped here.
			return false, spec.StateNormal, nil
		}
		// #5779: continue with a copy whose checkpoint is the stored one.
		s.CheckpointTs = old.CheckpointTs
	}
	// 2. Store.
	c.status = s
	// 3. Fast-fail errors.
	if changed, state, err := c.checkFailedStatus(&s, out); changed || state == spec.StateFailed {
		return changed, state, err
	}
	// 4. BootstrapDone toggled: report Normal, ignore a retryable error.
	if s.BootstrapDone != old.BootstrapDone {
		c.lg.Event(out, spec.Event{Kind: spec.BootstrapDoneChanged, Changefeed: string(c.ID), BootstrapDone: s.BootstrapDone})
		// HEAD returns before step 6 and leaves the backoff's baseline
		// where it was (catalogue entry toggle-keeps-baseline); cdcspec
		// runs step 6's progress check, so the next status at the same
		// checkpoint is not taken for progress.
		if !c.opts.Bugs.Has(spec.BugToggleKeepsBaseline) {
			c.backoff.followCheckpoint(now, s.CheckpointTs, out)
		}
		return true, spec.StateNormal, nil
	}
	// 6. Backoff.
	return c.backoff.CheckStatus(now, &s, c.opts.Bugs.Has(spec.BugFastFailIgnoredWithProgress), out)
}

// checkFailedStatus is step 3: a failed backoff stays failed; a fast-fail
// error fails it, and the baseline follows the failing report's checkpoint
// (the fast-fail wins over the progress). Follows
// coordinator/changefeed/backoff.go Backoff.checkFailedStatus at b813e76f9.
// The catalogue entry fast-fail-ignored-with-progress restores the logic
// before #5424: only HandleError, reached by an error status without
// progress, looks for a fast-fail error (Backoff.fastFailInHandleError).
func (c *Changefeed) checkFailedStatus(s *core.MaintainerStatus, out *core.Effects) (bool, string, *core.RunningError) {
	if c.backoff.failed {
		return false, spec.StateFailed, nil
	}
	if c.opts.Bugs.Has(spec.BugFastFailIgnoredWithProgress) {
		return false, spec.StateNormal, nil
	}
	for i := range s.Err {
		if spec.IsFastFailCode(s.Err[i].Code) {
			if s.CheckpointTs > c.backoff.checkpointTs {
				c.backoff.checkpointTs = s.CheckpointTs
			}
			c.backoff.failed = true
			e := s.Err[i]
			c.lg.Error("backoff.go", 122, "changefeed maintainer report a fast fail error",
				logging.CF(c.ID), logging.Ts("checkpointTs", c.backoff.checkpointTs), zapString("node", string(e.Node)),
				zapString("code", e.Code), zapString("state", spec.StateFailed), zapString("error", e.Message))
			return true, spec.StateFailed, &e
		}
	}
	return false, spec.StateNormal, nil
}

package model

import "cdcspec/spec"

// A dispatcher manager's HeartBeatRequest at TiCDC's granularity
// (maintainer/maintainer.go onHeartbeatRequest at b813e76f9): the node's
// watermark is applied first, checked by its sequence number, then the
// dispatcher statuses (which may finish operators). calCheckpointTs runs on
// its own goroutine and reads the operators' constraints before the
// watermarks (calculateNewCheckpointTs, step 1 then step 2); with the
// watermark written before the statuses, a calculation that sees an
// operator finished also sees the watermark of the heartbeat that finished
// it (#2864). So the model handles a heartbeat and a calculation each in
// one step (SPEC.md section 7). The catalogue entry
// operator-done-before-watermark restores the order before #2864: the
// statuses first, the watermark in a later step (PendWM,
// AMaintApplyWM), with every other action, a calculation among them,
// possible in between.
//
// The sequence number: a dispatcher manager bumps it when a dispatcher's
// status changes, and the maintainer takes a watermark with a higher seq
// whatever its checkpoint, or the same seq with a higher checkpoint (#2945).
// The model's watermarks of one manager reach the maintainer in the order
// they were sent (one message-center channel, the newest replacing a
// queued one), so every delivered watermark has the highest seq so far and
// is taken; a duplicate (a fault stronger than TiCDC's) is taken too. The
// catalogue entry watermark-seq-rejects-lower-checkpoint restores the rule
// before #2945: a newer watermark is taken only if its checkpoint is not
// lower.

// applyWatermark stores a node's watermark in checkpointTsByCapture.
func applyWatermark(cfg *Config, mt *Maint, src, wm uint8) {
	if cfg.bug(spec.BugWatermarkSeqRejectsLowerCheckpoint) && mt.WM[src] != none && wm < mt.WM[src] {
		return // before #2945: Seq >= old.Seq && CheckpointTs >= old.CheckpointTs
	}
	mt.WM[src] = wm
}

// flushPendingWatermark applies a heartbeat's watermark left pending by the
// statuses-first order before a later message of the same node is handled.
func flushPendingWatermark(cfg *Config, mt *Maint, src uint8) {
	if w := mt.PendWM[src]; w != 0 {
		mt.PendWM[src] = 0
		applyWatermark(cfg, mt, src, w)
	}
}

// maintApplyWatermark is the second half of a statuses-first heartbeat.
func maintApplyWatermark(cfg *Config, s *State, slot, src uint8) {
	mt := &s.Maint[slot]
	if mt.Exists && src < MaxNodes {
		flushPendingWatermark(cfg, mt, src)
	}
}

// appendHeartbeatActions lists the pending watermarks of the maintainer on slot.
func appendHeartbeatActions(s *State, slot uint8, buf []Action) []Action {
	mt := &s.Maint[slot]
	for i := uint8(0); i < MaxNodes; i++ {
		if mt.PendWM[i] != 0 {
			buf = append(buf, Action{Kind: AMaintApplyWM, Node: slot, Arg: i})
		}
	}
	return buf
}

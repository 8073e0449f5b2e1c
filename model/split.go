package model

import (
	"fmt"

	"cdcspec/spec"
)

// The split operator (maintainer/operator/operator_split.go) and the key
// ranges it creates. A table's span is whole, or one of its two halves
// after a split: the model splits a span once, at one key, so a table is
// covered by its whole span or by a left and a right half. A span is named
// by its key: table | part<<2 (a whole span's key is its table, so
// configurations without splits name spans as before).
//
// Start: the span is marked scheduling and the origin dispatcher gets a
// remove (OperatorType O_Split). Check: the origin's non-Working status
// finishes it with the final checkpoint. PostFinish (ReplaceReplicaSet): the
// span is replaced by its two halves, with checkpoint max(span checkpoint,
// final); with split target nodes aligned with the split result the halves
// are bound to them and added (scheduling, an add operator each), otherwise
// they are absent and the basic scheduler adds them. OnNodeRemove(origin)
// aborts the split: the span is marked absent whole.

// Span parts.
const (
	partWhole = 0
	partLeft  = 1
	partRight = 2
)

// splitKey is the key that separates a split table's halves; the rows of
// every table are at keys splitRowLeft and rowKey, one in each half.
const (
	splitKey     = "m"
	splitRowLeft = "c"
)

// Split modes (SpanRep.OpPh of a split operator).
const (
	splitNoTargets = 0 // splitTargetNodes empty: the new spans are absent
	splitAligned   = 1 // as many target nodes as new spans: bound to them
	splitMismatch  = 2 // the splitter returned another number of spans than target nodes
)

// spanKey names a span: its table and part.
func spanKey(t, part uint8) uint8 { return t | part<<2 }

func keyTable(k uint8) uint8 { return k & 3 }
func keyPart(k uint8) uint8  { return k >> 2 }

// partSpan is the key range of a part of table t.
func partSpan(t, part uint8) spec.Span {
	switch part {
	case partLeft:
		return spec.Span{Table: int64(t), End: splitKey}
	case partRight:
		return spec.Span{Table: int64(t), Start: splitKey}
	}
	return spec.WholeTable(int64(t))
}

// partsOverlap reports whether two parts of one table share a key.
func partsOverlap(a, b uint8) bool { return a == partWhole || b == partWhole || a == b }

// partCovers reports whether part p holds the keys of half h (partLeft or partRight).
func partCovers(p, h uint8) bool { return p == partWhole || p == h }

func keyName(k uint8) string {
	switch keyPart(k) {
	case partLeft:
		return fmt.Sprintf("t%d[-,%s)", keyTable(k), splitKey)
	case partRight:
		return fmt.Sprintf("t%d[%s,-)", keyTable(k), splitKey)
	}
	return fmt.Sprintf("t%d", keyTable(k))
}

func (sp *SpanRep) key() uint8 { return spanKey(sp.Table, sp.Part) }

// spanByKey returns the span of table and part keyTable(k), keyPart(k).
func (mt *Maint) spanByKey(k uint8) *SpanRep {
	for j := range mt.Spans {
		if sp := &mt.Spans[j]; sp.ID != 0 && sp.Table == keyTable(k) && sp.Part == keyPart(k) {
			return sp
		}
	}
	return nil
}

// spanOverlapping returns a span of table t whose keys overlap part.
func (mt *Maint) spanOverlapping(t, part uint8) *SpanRep {
	for j := range mt.Spans {
		if sp := &mt.Spans[j]; sp.ID != 0 && sp.Table == t && partsOverlap(sp.Part, part) {
			return sp
		}
	}
	return nil
}

// setFlushed sets the flushed ghost of table t, both halves, to ts.
func setFlushed(s *State, t, ts uint8) {
	s.Flushed[t] = ts
	s.FlushedPart[t] = [2]uint8{ts, ts}
}

// noteFlushed records that dispatcher d's rows reached the sink up to its
// checkpoint: each half it covers advances its flushed ghost if d started
// within it (no gap); the table's ghost is the lower half's.
func noteFlushed(s *State, d *Disp) {
	t := d.Table
	for h := uint8(0); h < 2; h++ {
		f := &s.FlushedPart[t][h]
		if partCovers(d.Part, h+1) && d.StartTs <= *f && d.Ckpt > *f {
			*f = d.Ckpt
		}
	}
	s.Flushed[t] = min(s.FlushedPart[t][0], s.FlushedPart[t][1])
}

// maintSplit: a split operator for a replicating whole span (the split
// scheduler, or the API's split_table). mode is splitNoTargets,
// splitAligned or splitMismatch; dslot is the target node of the right
// half (the left one stays on the origin).
func maintSplit(cfg *Config, s *State, slot, k, mode, dslot uint8, e *emitter) {
	mt := &s.Maint[slot]
	sp := mt.spanByKey(k)
	s.Splits++
	sp.Op, sp.OpPh, sp.OpDest = mopSplit, mode, none
	if mode != splitNoTargets {
		sp.OpDest = s.Ident(dslot)
	}
	sp.State = replScheduling
	if e != nil {
		e.add(spec.Event{Kind: spec.DispatcherOpStarted, Op: spec.OpSplit, Dispatcher: dispName(sp.ID), Span: partSpan(sp.Table, sp.Part), Origin: NodeName(sp.Node)})
	}
	resendOp(cfg, s, slot, sp)
}

// splitPostFinish replaces the split span by its halves (ReplaceReplicaSet)
// at checkpoint ckpt.
func splitPostFinish(cfg *Config, s *State, slot uint8, sp *SpanRep, ckpt uint8, e *emitter) {
	mt := &s.Maint[slot]
	old := *sp
	opFinishedOp(e, spec.OpSplit, &old, old.Node)
	*sp = SpanRep{}
	targets := [2]uint8{old.Node, old.OpDest}
	aligned := old.OpPh == splitAligned
	for h := uint8(0); h < 2; h++ {
		n := s.addSpan(mt, SpanRep{ID: s.allocID(), Table: old.Table, Part: partLeft + h, State: replAbsent, Node: none, Ckpt: ckpt})
		if n == nil {
			return
		}
		switch {
		case aligned && s.member(targets[h]):
			// addSchedulingReplicaSet, then postFinish's AddDispatcherOperator.
			n.State, n.Node, n.Op, n.OpDest = replScheduling, targets[h], mopAdd, targets[h]
			if e != nil {
				e.add(spec.Event{Kind: spec.DispatcherOpStarted, Op: spec.OpAdd, Dispatcher: dispName(n.ID), Span: partSpan(n.Table, n.Part), Node: NodeName(targets[h])})
			}
			resendOp(cfg, s, slot, n)
		case old.OpPh == splitMismatch && cfg.bug(spec.BugSplitDoubleAdd) && s.member(targets[h]):
			// Before #4078 postFinish ran although the new spans are
			// absent: its AddDispatcherOperator sends a Create to the
			// target while the basic scheduler, which read the span
			// absent and passed AddOperator's existence check first,
			// pushes its own add over it (check-then-act across two
			// goroutines). The model keeps the interleaving where the
			// scheduler's operator wins: the span stays absent for it.
			s.send(scheduleMsg(s, slot, mt, targets[h], schedCreate, n.ID, n.key(), createStartTs(cfg, mt, n), otAdd))
		}
	}
}

// splitAbort: OnNodeRemove(origin) or OnTaskRemoved: PostFinish marks the
// span absent whole.
func splitAbort(sp *SpanRep) { markAbsent(sp) }

// opFinishedOp is opFinished for a span of any part.
func opFinishedOp(e *emitter, op spec.Op, sp *SpanRep, node uint8) {
	if e != nil {
		e.add(spec.Event{Kind: spec.DispatcherOpFinished, Op: op, Dispatcher: dispName(sp.ID), Span: partSpan(sp.Table, sp.Part), Node: NodeName(node)})
	}
}

// appendSplitActions lists the split operators a maintainer may start on
// span sp: no target nodes, or target nodes (aligned with the split result
// or not) whose right half goes to each other node NodeManager lists.
func appendSplitActions(cfg *Config, s *State, slot uint8, sp *SpanRep, buf []Action) []Action {
	if int(s.Splits) >= cfg.Splits || sp.Part != partWhole || sp.State != replReplicating || sp.Op != mopNone {
		return buf
	}
	buf = append(buf, Action{Kind: ASplit, Node: slot, Arg: sp.key(), Arg2: splitNoTargets})
	for d := uint8(0); d < uint8(cfg.Nodes); d++ {
		// the right half goes to another node NodeManager lists (a target
		// equal to the origin is a split in place, which the no-targets
		// mode covers up to the scheduler's choice)
		if s.schedulable(d) && s.Ident(d) != sp.Node {
			buf = append(buf, Action{Kind: ASplit, Node: slot, Arg: sp.key(), Arg2: splitAligned | d<<2},
				Action{Kind: ASplit, Node: slot, Arg: sp.key(), Arg2: splitMismatch | d<<2})
		}
	}
	return buf
}

func splitModeName(arg2 uint8) string {
	switch arg2 & 3 {
	case splitAligned:
		return fmt.Sprintf("target nodes aligned, right half to n%d", arg2>>2)
	case splitMismatch:
		return fmt.Sprintf("target nodes not aligned with the split result, right half to n%d", arg2>>2)
	}
	return "no target nodes"
}

package traces

import (
	"bytes"
	"fmt"
	"strings"

	"cdcspec/spec"
)

// The barrier's lines (spec/barrier.go): how TiCDC HEAD and cdcspec's impl
// spell a block event's fields, read back into spec events.

// parseInfluence reads an influence type as TiCDC logs
// heartbeatpb.InfluenceType ("Normal", "DB", "All") or as cdcspec's spec
// spells it (spec.InfluenceNormal, InfluenceDB, InfluenceAll): lower-cased.
func parseInfluence(v []byte) string {
	return strings.ToLower(strings.Trim(string(v), `"`))
}

// convBlockStatus keeps a block status's stage as heartbeatpb.BlockStage
// spells it (WAITING, DONE): setField lower-cases State.
func convBlockStatus(r *Record, it *Item, out []Item) []Item {
	it.Event.State = strings.ToUpper(it.Event.State)
	return out
}

// convBlockAction reads the maintainer's action from "pending event get the
// action". TiCDC logs the action twice: action, the DispatcherAction's
// compact proto text ("action:Pass CommitTs:449 IsSyncPoint:true"; proto3
// omits zero values, so Write and a DDL's IsSyncPoint:false do not appear),
// and innerAction, its number (Write 0, Pass 1). cdcspec's impl logs
// action=write or action=pass.
func convBlockAction(r *Record, it *Item, out []Item) []Item {
	e := &it.Event
	text, _ := r.Field("action")
	if n, ok := r.Field("innerAction"); ok {
		switch string(n) {
		case "0":
			e.State = spec.ActionWrite
		case "1":
			e.State = spec.ActionPass
		}
	} else if e.State != spec.ActionWrite && e.State != spec.ActionPass && len(text) > 0 {
		e.State = spec.ActionWrite
		if v, _ := structField(text, "action"); string(v) == "Pass" || string(v) == "1" {
			e.State = spec.ActionPass
		}
	}
	if v, ok := structField(text, "IsSyncPoint"); ok && string(v) == "true" {
		e.SyncPoint = true
	}
	if v, ok := structField(text, "CommitTs"); ok && e.Checkpoint == 0 {
		e.Checkpoint = parseTs(v)
	}
	return out
}

// blockStatusKey: the dispatcher's WAITING block status; Dur is how long
// it has been re-sent, from executeCount (every 5 s, resendTimeInterval).
// identifier, where logged ("set resend task", "cancel resend task"), is
// TiCDC's BlockEventIdentifier as zap.Any writes a struct:
// {"CommitTs":463…,"IsSyncPoint":false}.
func blockStatusKey(r *Record, it *Item, out []Item) []Item {
	it.OpID = it.Event.Dispatcher
	// r.Field of both keys, in one pass (the last field of a key wins)
	var n, id []byte
	hasN, hasID := false, false
	r.parseFields()
	for i := len(r.fields) - 1; i >= 0; i-- {
		switch f := &r.fields[i]; string(f.key) {
		case "executeCount":
			if !hasN {
				n, hasN = f.val, true
			}
		case "identifier":
			if !hasID {
				id, hasID = f.val, true
			}
		}
	}
	if hasN {
		it.Dur = int64(parseTs(n)) * resendIntervalMs
	}
	if hasID {
		if v, ok := structField(id, "CommitTs"); ok {
			it.Event.Checkpoint = parseTs(v)
		} else {
			it.Event.Checkpoint = parseTs(id) // a bare commitTs
		}
		v, _ := structField(id, "IsSyncPoint")
		it.Event.SyncPoint = string(v) == "true"
	}
	return out
}

// structField returns the value of name in a struct or message as zap
// renders one: JSON ({"CommitTs":5,"IsSyncPoint":true}), proto compact
// text (CommitTs:5 IsSyncPoint:true) or Go's %+v ({CommitTs:5}).
func structField(s []byte, name string) ([]byte, bool) {
	for from := 0; ; {
		i := bytes.Index(s[from:], []byte(name))
		if i < 0 {
			return nil, false
		}
		i += from
		from = i + len(name)
		if i > 0 && isIdentByte(s[i-1]) {
			continue // the tail of a longer name
		}
		rest := trimQuoteSpace(s[from:])
		if len(rest) == 0 || rest[0] != ':' && rest[0] != '=' {
			continue
		}
		rest = trimQuoteSpace(rest[1:])
		j := 0
		for j < len(rest) && isIdentByte(rest[j]) {
			j++
		}
		return rest[:j], true
	}
}

// trimQuoteSpace is bytes.TrimLeft(b, `\" `) without building the cutset's
// set per call.
func trimQuoteSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == '\\' || b[0] == '"' || b[0] == ' ') {
		b = b[1:]
	}
	return b
}

func isIdentByte(c byte) bool {
	return c == '_' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// waitRun is a dispatcher's WAITING block status re-sent ("set resend
// task", "resend task periodic resend"): its first line, and of the last
// only its time and source (a re-send is most of a busy log's items).
type waitRun struct {
	first    Item
	lastTime int64
	lastSrc  spec.Source
	n        int
	maxDur   int64
}

// resendIntervalMs is TiCDC's resendTimeInterval (dispatcher/helper.go).
const resendIntervalMs = 5000

// barrierState is the barrier's log-only state besides Checker.barriers
// and Checker.blockWait. Its maps are made on first use.
type barrierState struct {
	// waiting: per dispatcher ID, its WAITING block status (cdcspec's
	// "dispatcher reported block status") with no DONE since.
	waiting map[string]*Item
	// sched: per changefeed and barrier mode, the last DDL table change
	// the maintainer scheduled ("add new table", "remove table").
	sched map[string]*Item
	// quiesced: the time of the last quiescence marker (cdcspec's runs),
	// at which barrier-eventually-passes judged every open wait.
	quiesced int64
	// freeStuck and freeWait: Checker.barriers' and Checker.blockWait's
	// entries that ended, for reuse (see spare).
	freeStuck []*stuckOp
	freeWait  []*waitRun
}

// ---------------------------------------------------------------------------
// barrier-stuck: a block event (DDL, syncpoint) the maintainer cannot
// resolve, or a dispatcher whose WAITING block status stays unanswered;
// and table-set-follows-ddls' log-only symptom, DDL table changes
// scheduled out of commitTs order.

func (c *Checker) observeBarriers(it *Item) {
	e := &it.Event
	switch e.Kind {
	case spec.BlockStatusReported:
		c.blockStatus(it)
	case spec.DispatcherRemoved:
		delete(c.bar.waiting, e.Dispatcher)
		delete(c.blockWait, e.Dispatcher)
	case spec.DispatcherManagerClosed, spec.ChangefeedRemoved:
		for k, w := range c.bar.waiting {
			if w.Event.Changefeed == e.Changefeed && (e.Kind == spec.ChangefeedRemoved || w.Event.Node == e.Node) {
				delete(c.bar.waiting, k)
			}
		}
		if e.Kind == spec.ChangefeedRemoved {
			c.resetScheduled(e.Changefeed)
		}
	case spec.NodeLeft, spec.CaptureSuicide:
		for k, w := range c.bar.waiting {
			if w.Event.Node == e.Node && e.Node != "" {
				delete(c.bar.waiting, k)
			}
		}
	case spec.Quiesced:
		c.bar.quiesced = e.Time
	case spec.MaintainerCreated, spec.MaintainerBootstrapped:
		// A new maintainer rebuilds its barrier from the dispatchers'
		// bootstrap responses and may schedule a replayed DDL again.
		c.resetScheduled(e.Changefeed)
	}
	switch it.Sym {
	case SymDDLScheduled:
		c.ddlScheduled(it)
	case SymBarrierCreated, SymBarrierStuck:
		k := cfOp{e.Changefeed, it.OpID}
		b := c.barriers[k]
		if b == nil {
			if len(c.barriers) >= maxTracked {
				c.untracked++
				return
			}
			b = reuse(&c.bar.freeStuck)
			*b = stuckOp{} // in place: a literal would be built and copied
			b.first = *it
			c.barriers[k] = b
		}
		if it.Sym == SymBarrierStuck {
			b.last = *it
			b.n++
		}
	case SymBarrierDone:
		k := cfOp{e.Changefeed, it.OpID}
		if b := c.barriers[k]; b != nil {
			delete(c.barriers, k)
			c.endBarrier(b, it)
			c.bar.freeStuck = spare(c.bar.freeStuck, b)
		}
	case SymBlockWaiting:
		s := c.blockWait[it.OpID]
		if s == nil {
			if len(c.blockWait) >= maxTracked {
				c.untracked++
				return
			}
			s = reuse(&c.bar.freeWait)
			*s = waitRun{}
			s.first = *it
			c.blockWait[it.OpID] = s
		}
		s.lastTime, s.lastSrc, s.n = it.Event.Time, it.Event.Source, s.n+1
		if it.Dur > s.maxDur {
			s.maxDur = it.Dur
		}
	case SymBlockDone:
		if s := c.blockWait[it.OpID]; s != nil {
			delete(c.blockWait, it.OpID)
			c.bar.freeWait = spare(c.bar.freeWait, s)
		}
	}
}

// maxSpare bounds the recycled stuckOps and waitRuns (a block event's, a
// dispatcher's wait: one per block event per dispatcher, the checker's most
// frequent allocations).
const maxSpare = 64

// spare keeps x, which nothing references any more, for reuse.
func spare[T any](free []*T, x *T) []*T {
	if len(free) < maxSpare {
		free = append(free, x)
	}
	return free
}

// reuse returns a spare value from free (its fields are the caller's to
// set), or a new one.
func reuse[T any](free *[]*T) *T {
	if n := len(*free); n > 0 {
		x := (*free)[n-1]
		*free = (*free)[:n-1]
		return x
	}
	return new(T)
}

// blockStatus tracks cdcspec's block-status lines: a WAITING status opens
// (or, for another block event, replaces) the dispatcher's wait, DONE for
// the same event ends it.
func (c *Checker) blockStatus(it *Item) {
	e := &it.Event
	w := c.bar.waiting[e.Dispatcher]
	switch e.State {
	case spec.StageWaiting:
		if w != nil && w.Event.Checkpoint == e.Checkpoint && w.Event.SyncPoint == e.SyncPoint && w.Event.Node == e.Node {
			return // a re-send: the wait began at the first
		}
		if c.bar.waiting == nil {
			c.bar.waiting = map[string]*Item{}
		}
		if w == nil && len(c.bar.waiting) >= maxTracked {
			c.untracked++
			return
		}
		x := *it
		c.bar.waiting[e.Dispatcher] = &x
	case spec.StageDone:
		if w != nil && w.Event.Checkpoint == e.Checkpoint && w.Event.SyncPoint == e.SyncPoint {
			delete(c.bar.waiting, e.Dispatcher)
		}
	}
}

func (c *Checker) resetScheduled(cf string) {
	for k := range c.bar.sched {
		if strings.HasPrefix(k, cf+"|") {
			delete(c.bar.sched, k)
		}
	}
}

// ddlScheduled checks that one maintainer schedules the table changes of
// DDLs in commitTs order (TiCDC's pendingEvents queue: "ensures ddl ...
// only schedules once and in order"; #3443 scheduled them out of order, a
// recover before the truncate's drop). A change at a lower commitTs than
// one already scheduled is suspect: the log shows the order, not yet a
// wrong table set.
func (c *Checker) ddlScheduled(it *Item) {
	e := &it.Event
	if e.Changefeed == "" || e.Checkpoint == 0 {
		return
	}
	k := e.Changefeed + "|" + it.OpID
	prev := c.bar.sched[k]
	if prev != nil && e.Checkpoint < prev.Event.Checkpoint {
		c.add(Finding{Property: string(spec.TableSetFollowsDDLs), Severity: Suspect, Changefeed: e.Changefeed, Symptom: "ddl-scheduled-out-of-order",
			time: e.Time, last: e.Time,
			Message: fmt.Sprintf("the table set must follow the DDLs in commitTs order, but the maintainer scheduled the table change of the DDL at commitTs %d (%q, tables %s) after that of the DDL at commitTs %d (%q, tables %s), with no maintainer restart in between (#3443: a table added back before an earlier DDL dropped it, or dropped after a later DDL re-created it)",
				e.Checkpoint, it.Msg, joinTablesOr(e.Tables), prev.Event.Checkpoint, prev.Msg, joinTablesOr(prev.Event.Tables)),
			Evidence: []Evidence{ev(prev), ev(it)}})
		return // the later DDL stays the high-water mark
	}
	if c.bar.sched == nil {
		c.bar.sched = map[string]*Item{}
	}
	x := *it
	c.bar.sched[k] = &x
}

// joinTablesOr renders table IDs, or "(none named)".
func joinTablesOr(ts []int64) string {
	if len(ts) == 0 {
		return "(none named)"
	}
	return spec.JoinTables(ts)
}

// endBarrier grades a block event the maintainer warned about; end is the
// line that resolved it, nil at the end of the logs.
func (c *Checker) endBarrier(b *stuckOp, end *Item) {
	if b.n == 0 {
		return
	}
	cf := b.first.Event.Changefeed
	endTime := c.lastTime
	if end != nil {
		endTime = end.Event.Time
	}
	d := endTime - b.first.Event.Time
	f := Finding{Property: PropBarrierStuck, Changefeed: cf, time: b.first.Event.Time, last: b.last.Event.Time,
		Evidence: []Evidence{ev(&b.first)}}
	if b.last.Event.Source != b.first.Event.Source {
		f.Evidence = append(f.Evidence, ev(&b.last))
	}
	what := fmt.Sprintf("the maintainer logged \"barrier event is not resolved\" %d time(s) for the block event at commitTs %s", b.n, b.first.OpID)
	switch {
	case end != nil && d < c.stuck:
		return // resolved in time: TiCDC's warning was a wait, not a stall
	case end != nil:
		f.Severity = Suspect
		f.Message = fmt.Sprintf("a block event must be resolved, but it was resolved only %s after it was first seen (threshold %s): %s", fmtDur(d), fmtDur(c.stuck), what)
	case d >= c.stuck:
		f.Severity = Suspect
		f.Message = fmt.Sprintf("a block event must be resolved, but it was not in the %s the logs continue after it was first seen (threshold %s): %s; the changefeed's checkpoint cannot pass it", fmtDur(d), fmtDur(c.stuck), what)
	default:
		f.Severity = InsufficientEvidence
		f.Message = fmt.Sprintf("a block event was not resolved when the logs end, %s after it was first seen: %s", fmtDur(d), what)
	}
	if end != nil {
		f.Evidence = append(f.Evidence, ev(end))
	}
	c.add(f)
}

func (c *Checker) finishBarriers() {
	for _, k := range sortedKeysBy(c.barriers) {
		c.endBarrier(c.barriers[k], nil)
	}
	for _, k := range sortedKeysOf(c.blockWait) {
		s := c.blockWait[k]
		d := max(s.maxDur, s.lastTime-s.first.Event.Time)
		if d < c.stuck {
			continue
		}
		what := "its WAITING block status"
		if s.first.Event.Checkpoint != 0 {
			what = fmt.Sprintf("its WAITING block status for the %s at commitTs %d", blockWhat(s.first.Event.SyncPoint), s.first.Event.Checkpoint)
		}
		f := Finding{Property: PropBarrierStuck, Severity: Suspect, Node: s.first.Event.Node, time: s.first.Event.Time, last: s.lastTime,
			Message: fmt.Sprintf("a block event must be resolved, but dispatcher %s re-sent %s for %s (threshold %s) and its resend task was never cancelled (%d \"set resend task\" or \"resend task periodic resend\" line(s))",
				k, what, fmtDur(d), fmtDur(c.stuck), s.n),
			Evidence: []Evidence{ev(&s.first)}}
		if s.n > 1 {
			f.Evidence = append(f.Evidence, Evidence{File: s.lastSrc.File, Line: s.lastSrc.Line, Text: s.lastSrc.Text})
		}
		c.add(f)
	}
	for _, k := range sortedKeysOf(c.bar.waiting) {
		w := c.bar.waiting[k]
		d := c.lastTime - w.Event.Time
		f := Finding{Property: PropBarrierStuck, Severity: Suspect, Changefeed: w.Event.Changefeed, Node: w.Event.Node, time: w.Event.Time,
			Message: fmt.Sprintf("a blocked dispatcher must resume, but dispatcher %s on node %s reported WAITING for the %s at commitTs %d and no DONE in the %s the logs continue (threshold %s)",
				k, orUnknown(w.Event.Node), blockWhat(w.Event.SyncPoint), w.Event.Checkpoint, fmtDur(d), fmtDur(c.stuck)),
			Evidence: []Evidence{ev(w)}}
		switch {
		case d >= c.stuck:
		case w.Event.Time <= c.bar.quiesced:
			continue // judged by barrier-eventually-passes at the quiescence marker
		default:
			f.Severity = InsufficientEvidence
			f.Message = fmt.Sprintf("dispatcher %s on node %s reported WAITING for the %s at commitTs %d and the logs end %s later with no DONE, too soon to tell whether it resumes (threshold %s)",
				k, orUnknown(w.Event.Node), blockWhat(w.Event.SyncPoint), w.Event.Checkpoint, fmtDur(d), fmtDur(c.stuck))
		}
		c.add(f)
	}
}

func blockWhat(syncPoint bool) string {
	if syncPoint {
		return "syncpoint"
	}
	return "DDL"
}

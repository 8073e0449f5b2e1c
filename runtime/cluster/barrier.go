package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"cdcspec/impl/upstream"
	"cdcspec/runtime/adminapi"
	"cdcspec/spec"
)

// The barrier's compound faults (move-writer-during-ddl,
// drop-add-table-status) open, on real processes, the windows in which
// TiCDC's barrier bugs #3974 and #3799 show. Without them the barrier
// finishes within milliseconds of the last WAITING and a move or a lost
// status timed from outside never lands inside it. Each fault is made of
// message faults TiCDC's message center really has (a congested stream
// that delivers late, a broken stream or a full receive queue that loses
// what is in flight), an upstream DDL and an operator's move; none of them
// names a bug. Each step waits for the capture log lines that say where
// the barrier is (TiCDC's messages, spec/logs.go) and notes whether the
// window opened (Recovery.Path).

// logTail reads the lines the cluster's logs gain after it was made.
type logTail struct {
	files []string
	off   map[string]int64
	part  map[string]string
	// next: lines read but not yet looked at by wait.
	next []string
}

// tailLogs starts a tail of every capture log at its current end.
func (c *Cluster) tailLogs() *logTail {
	t := &logTail{off: map[string]int64{}, part: map[string]string{}}
	for _, p := range c.procs {
		t.files = append(t.files, p.log)
		if st, err := os.Stat(p.log); err == nil {
			t.off[p.log] = st.Size()
		}
	}
	return t
}

// lines returns the complete lines written since the last call.
func (t *logTail) lines() []string {
	var out []string
	for _, f := range t.files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		if _, err := fh.Seek(t.off[f], io.SeekStart); err == nil {
			r := bufio.NewReaderSize(fh, 1<<16)
			for {
				s, err := r.ReadString('\n')
				t.off[f] += int64(len(s))
				if err != nil {
					t.part[f] += s
					break
				}
				out = append(out, t.part[f]+s)
				t.part[f] = ""
			}
		}
		fh.Close()
	}
	return out
}

// wait polls the logs every 10 ms until a new line matches or d passes;
// the lines read after the match are kept for the next wait.
func (t *logTail) wait(ctx context.Context, d time.Duration, match func(string) bool) (string, error) {
	deadline := time.Now().Add(d)
	for {
		t.next = append(t.next, t.lines()...)
		for i, l := range t.next {
			if match(l) {
				t.next = t.next[i+1:]
				return l, nil
			}
		}
		t.next = t.next[:0]
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no such log line within %s", d)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// field returns a log line's field value ("" if absent), unquoted.
func field(line, key string) string {
	i := strings.Index(line, "["+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if s, err := strconv.QuotedPrefix(v); err == nil {
			u, _ := strconv.Unquote(s)
			return u
		}
	}
	if j := strings.IndexByte(v, ']'); j >= 0 {
		return v[:j]
	}
	return v
}

// The log lines the barrier faults wait for (spec/logs.go: impl's
// BlockStatusReported line, basic_dispatcher.go's "pending event get the
// action" of a DDL the table trigger writes).
const (
	blockStatusLine = `"dispatcher reported block status"`
	pendingDDLLine  = `"pending event get the action"`
	eventDoneLine   = `"all dispatchers reported event done, remove event"`
	// droppedLine is runtime/server's line for a message a debug rule
	// lost.
	droppedLine = `"debug rule drops a message"`
)

var spanTable = regexp.MustCompile(`^t(\d+)`)

// blockStatus matches a dispatcher's block status line at blockTs in stage.
func blockStatus(line string, blockTs uint64, stage string) bool {
	return strings.Contains(line, blockStatusLine) && tsIs(line, "blockTs", blockTs) && field(line, "stage") == stage
}

// tsIs reports whether a ts field of a runtime log line is the ms ts ms:
// the runtime logs ts fields as TSOs, as TiCDC does (logging.Logger.TSO).
func tsIs(line, key string, ms uint64) bool {
	return field(line, key) == strconv.FormatUint(spec.TSO(ms), 10)
}

// ruleUntil keeps a message rule on the captures ids() names, renewed
// every period for 2*period (so it ends at most 2*period after the last
// renewal), until a new log line matches or d passes; it returns the line.
// The rule is thus in force from before the barrier gets where the fault
// wants it, however long earlier barriers hold the dispatchers back, and
// ends soon after.
func (c *Cluster) ruleUntil(ctx context.Context, ids func() []string, r adminapi.DelayRule, period time.Duration, tail *logTail,
	d time.Duration, match func(string) bool) (string, error) {
	r.ForMs = (2 * period).Milliseconds()
	deadline := time.Now().Add(d)
	for {
		for _, id := range ids() {
			if err := c.delayRule(ctx, id, r); err != nil {
				return "", err
			}
		}
		l, err := tail.wait(ctx, period, match)
		if err == nil || ctx.Err() != nil {
			return l, err
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no such log line within %s", d)
		}
	}
}

// MoveWriterDuringDDL is move-writer-during-ddl (#3974's window). Every
// live capture holds the maintainer's HeartBeatResponses (they carry the
// barrier's Write and Pass) for hold each (a congested stream), from
// before an ALTER TABLE of two tables commits until its writer reported
// DONE; the DDL blocks the two tables' dispatchers and not the table
// trigger, so the writer is one of them. The maintainer then sends Pass to
// the other, which the hold keeps from it, and the writer's table is moved
// at once, before its checkpoint passes the DDL (its next flush comes a
// flush interval after the DONE): the moved dispatcher starts below the
// DDL and waits at it again, and the barrier must pass it too. Reached
// when that new dispatcher reported WAITING before the barrier removed the
// event.
func (c *Cluster) MoveWriterDuringDDL(ctx context.Context, hold time.Duration) (string, error) {
	if len(c.captureOfSlot()) < 2 {
		return "", errors.New("move-writer-during-ddl needs 2 live captures")
	}
	live := func() []string {
		var out []string
		for _, id := range c.captureOfSlot() {
			out = append(out, id)
		}
		return out
	}
	c.caughtUp(ctx, 2*time.Second, 15*time.Second)
	tail := c.tailLogs()
	// The DDL commits 1.5 s ahead: the hold is in force before any
	// dispatcher reaches it.
	ev, err := c.CommitBlockDDL(upstream.DDLNormal)
	if err != nil {
		return "", err
	}
	done, err := c.ruleUntil(ctx, live, adminapi.DelayRule{Type: "HeartBeatResponse", Action: "delay", DelayMs: hold.Milliseconds(), Count: 1 << 20},
		time.Second, tail, 20*time.Second, func(l string) bool { return blockStatus(l, ev.CommitTs, "DONE") })
	if err != nil {
		return "", fmt.Errorf("%s at commit-ts %d: the writer's DONE: %w", ev.Query, spec.TSO(ev.CommitTs), err)
	}
	m := spanTable.FindStringSubmatch(field(done, "tableSpan"))
	if m == nil {
		return "", fmt.Errorf("writer's DONE names no table: %s", done)
	}
	table, _ := strconv.ParseInt(m[1], 10, 64)
	from := field(done, "nodeID")
	var targets []string
	for _, id := range live() {
		if id != from {
			targets = append(targets, id)
		}
	}
	sort.Strings(targets)
	to := ""
	for _, i := range c.perm(len(targets)) {
		if n, err := c.API().MoveTable(ctx, c.cfg.Changefeed, table, targets[i]); err == nil && n > 0 {
			to = targets[i]
			break
		}
	}
	if to == "" {
		return "", fmt.Errorf("%s at commit-ts %d: the writer's table %d could not move off %s", ev.Query, spec.TSO(ev.CommitTs), table, from)
	}
	removed := false
	_, err = tail.wait(ctx, hold+2*time.Second, func(l string) bool {
		if strings.Contains(l, eventDoneLine) && tsIs(l, "commitTs", ev.CommitTs) {
			removed = true
		}
		return blockStatus(l, ev.CommitTs, "WAITING") && field(l, "nodeID") == to && spanTable.FindString(field(l, "tableSpan")) == "t"+m[1]
	})
	c.notePath(err == nil && !removed, "the writer's table %d moved to %s before its checkpoint passed the DDL at commit-ts %d; its new dispatcher waits at the DDL while the barrier still holds it", table, to, spec.TSO(ev.CommitTs))
	return fmt.Sprintf("%s at commit-ts %d; writer's table %d %s -> %s", ev.Query, spec.TSO(ev.CommitTs), table, from, to), nil
}

// caughtUp waits, at most d, until the stored checkpoint is within lag of
// now: no earlier barrier holds the dispatchers back, so the fault's own
// DDL is reached about when the upstream's resolved ts passes it. It
// reports whether it caught up (the fault goes on either way).
func (c *Cluster) caughtUp(ctx context.Context, lag, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; {
		if s, ok := c.Stored(); ok && time.Now().UnixMilli()-int64(s.Checkpoint) < lag.Milliseconds() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DropAddTableStatus is drop-add-table-status (#3799's window). A table is
// created upstream; the maintainer's capture loses every inbound
// BlockStatusRequest (a broken stream) from then until shortly (300 to
// 600 ms) after the table trigger wrote the CREATE TABLE, so the trigger's
// NONE status of it is lost and is re-sent only after the trigger's
// resend period (5 s). A DB-level DDL commits right after the trigger
// wrote the CREATE TABLE (1.5 s ahead): the trigger reaches it once the
// drop ended and before the NONE is re-sent, while the maintainer does
// not know the new table yet; it must not report it before the CREATE
// TABLE is ACKed. Reached when, after the trigger wrote the CREATE TABLE,
// a BlockStatusRequest from the trigger's own capture was dropped.
func (c *Cluster) DropAddTableStatus(ctx context.Context) (string, error) {
	c.caughtUp(ctx, 2*time.Second, 15*time.Second)
	maint, err := c.maintainerHost(ctx)
	if err != nil {
		return "", err
	}
	tail := c.tailLogs()
	// The CREATE TABLE commits 1.5 s ahead: the drop is in force before
	// the trigger reaches it.
	table, createTs, err := c.createTable()
	if err != nil {
		return "", err
	}
	// The drop lasts at most until 1.5 s past the CREATE TABLE's commit
	// ts: a trigger held back by another barrier (whose statuses the drop
	// loses too) would otherwise keep the drop going; the window is then
	// not open, and the step fails to be retried.
	rule := adminapi.DelayRule{Type: "BlockStatusRequest", Action: "drop", Count: 1 << 20}
	_, err = c.ruleUntil(ctx, func() []string { return []string{maint} }, rule, 300*time.Millisecond, tail,
		time.Until(time.UnixMilli(int64(createTs)+1500)), func(l string) bool {
			return strings.Contains(l, pendingDDLLine) && tsIs(l, "pendingEventCommitTs", createTs)
		})
	if err != nil {
		return "", fmt.Errorf("CREATE TABLE %d at commit-ts %d: the table trigger did not write it within 1.5 s (another barrier held it), so its NONE was not lost: %w", table, spec.TSO(createTs), err)
	}
	ev, err := c.CommitBlockDDL(upstream.DDLDB)
	if err != nil {
		return "", err
	}
	// The trigger's NONE goes out on the tick that wrote the DDL: its
	// capture's drop of a status from itself (the trigger runs beside the
	// maintainer) follows within a tick.
	_, err = tail.wait(ctx, time.Second, func(l string) bool {
		return strings.Contains(l, droppedLine) && field(l, "type") == "BlockStatusRequest" && field(l, "from") == maint
	})
	c.notePath(err == nil, "the table trigger's NONE of CREATE TABLE %d (commit-ts %d) was lost at %s; %s at commit-ts %d above it",
		table, spec.TSO(createTs), maint, ev.Query, spec.TSO(ev.CommitTs))
	return fmt.Sprintf("table %d at commit-ts %d, block statuses to %s dropped until it was written, %s at commit-ts %d", table, spec.TSO(createTs), maint, ev.Query, spec.TSO(ev.CommitTs)), nil
}

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

// wait polls the logs every 10 ms until a new line matches or d passes.
func (t *logTail) wait(ctx context.Context, d time.Duration, match func(string) bool) (string, error) {
	deadline := time.Now().Add(d)
	for {
		for _, l := range t.lines() {
			if match(l) {
				return l, nil
			}
		}
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
)

var spanTable = regexp.MustCompile(`^t(\d+)`)

// blockStatus matches a dispatcher's block status line at blockTs in stage.
func blockStatus(line string, blockTs uint64, stage string) bool {
	return strings.Contains(line, blockStatusLine) && field(line, "blockTs") == strconv.FormatUint(blockTs, 10) && field(line, "stage") == stage
}

// MoveWriterDuringDDL is move-writer-during-ddl (#3974's window). Every
// live capture holds the maintainer's HeartBeatResponses (they carry the
// barrier's Write and Pass) for hold, for hold+4 s (a congested stream);
// an ALTER TABLE of two tables commits, which blocks their dispatchers and
// not the table trigger, so the writer is one of them. Once the writer
// reported DONE, the maintainer sends Pass to the other, which the hold
// keeps from it; the writer's table is moved at once, before its
// checkpoint passes the DDL (its next flush comes a flush interval after
// the DONE), so the moved dispatcher starts below the DDL and waits at it
// again: the barrier must pass it too. Reached when that new dispatcher
// reported WAITING at the DDL.
func (c *Cluster) MoveWriterDuringDDL(ctx context.Context, hold time.Duration) (string, error) {
	ids := c.captureOfSlot()
	if len(ids) < 2 {
		return "", errors.New("move-writer-during-ddl needs 2 live captures")
	}
	tail := c.tailLogs()
	for _, id := range ids {
		if err := c.delayRule(ctx, id, adminapi.DelayRule{Type: "HeartBeatResponse", Action: "delay", DelayMs: hold.Milliseconds(),
			Count: 1 << 20, ForMs: (hold + 4*time.Second).Milliseconds()}); err != nil {
			return "", err
		}
	}
	ev, err := c.CommitBlockDDL(upstream.DDLNormal)
	if err != nil {
		return "", err
	}
	done, err := tail.wait(ctx, hold+10*time.Second, func(l string) bool { return blockStatus(l, ev.CommitTs, "DONE") })
	if err != nil {
		return "", fmt.Errorf("%s at ts %d: the writer's DONE: %w", ev.Query, ev.CommitTs, err)
	}
	m := spanTable.FindStringSubmatch(field(done, "tableSpan"))
	if m == nil {
		return "", fmt.Errorf("writer's DONE names no table: %s", done)
	}
	table, _ := strconv.ParseInt(m[1], 10, 64)
	from := field(done, "nodeID")
	var targets []string
	for _, id := range c.captureOfSlot() {
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
		return "", fmt.Errorf("%s at ts %d: the writer's table %d could not move off %s", ev.Query, ev.CommitTs, table, from)
	}
	_, err = tail.wait(ctx, hold+2*time.Second, func(l string) bool {
		return blockStatus(l, ev.CommitTs, "WAITING") && field(l, "nodeID") == to && spanTable.FindString(field(l, "tableSpan")) == "t"+m[1]
	})
	c.notePath(err == nil, "the writer's table %d moved to %s before its checkpoint passed the DDL at ts %d; its new dispatcher waits at the DDL again", table, to, ev.CommitTs)
	return fmt.Sprintf("%s at ts %d; writer's table %d %s -> %s", ev.Query, ev.CommitTs, table, from, to), nil
}

// DropAddTableStatus is drop-add-table-status (#3799's window). A table is
// created upstream (its CREATE TABLE commits 1.5 s ahead); the
// maintainer's capture loses every inbound BlockStatusRequest until 800 ms
// after the CREATE TABLE's commit ts (a broken stream), so the table
// trigger's NONE status of it is lost, and the trigger re-sends it only
// after its resend period (5 s). A DB-level DDL commits 1.2 s above the
// CREATE TABLE: the trigger reaches it before the maintainer knew the new
// table, and must not report it before the CREATE TABLE is ACKed.
// Reached when the trigger wrote the CREATE TABLE inside the drop window.
func (c *Cluster) DropAddTableStatus(ctx context.Context) (string, error) {
	maint, err := c.maintainerHost(ctx)
	if err != nil {
		return "", err
	}
	tail := c.tailLogs()
	table, createTs, err := c.createTable()
	if err != nil {
		return "", err
	}
	end := time.UnixMilli(int64(createTs) + 800)
	if err := c.delayRule(ctx, maint, adminapi.DelayRule{Type: "BlockStatusRequest", Action: "drop", Count: 1 << 20,
		ForMs: time.Until(end).Milliseconds()}); err != nil {
		return "", err
	}
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(1200 * time.Millisecond):
	}
	ev, err := c.CommitBlockDDL(upstream.DDLDB)
	if err != nil {
		return "", err
	}
	ts := strconv.FormatUint(createTs, 10)
	var seen time.Time
	_, err = tail.wait(ctx, time.Until(end)+2*time.Second, func(l string) bool {
		if strings.Contains(l, pendingDDLLine) && field(l, "pendingEventCommitTs") == ts {
			seen = time.Now()
			return true
		}
		return false
	})
	c.notePath(err == nil && seen.Before(end), "the table trigger wrote CREATE TABLE %d (ts %d) while %s dropped block statuses; %s at ts %d above it",
		table, createTs, maint, ev.Query, ev.CommitTs)
	return fmt.Sprintf("table %d at ts %d, block statuses to %s dropped until ts %d, %s at ts %d", table, createTs, maint, end.UnixMilli(), ev.Query, ev.CommitTs), nil
}

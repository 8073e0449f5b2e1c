package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"

	"cdcspec/impl/coordinator"
	"cdcspec/impl/core"
	"cdcspec/impl/dispatcher"
	"cdcspec/impl/logging"
	"cdcspec/impl/maintainer"
	"cdcspec/spec"
)

// Commands (one component kind per story is usual, several may coexist):
//
//	new [bugs=NAME,...] [raw-watermark] [now=MS] [stuck=DUR]   reset; time starts at now (default 1000)
//	    [enable-table-across-nodes]                            the changefeed's scheduler config
//	                                                           enable-table-across-nodes (new tables split in two)
//	    [delivery=NAME]                                        the delivery assumption (default TiCDC's message
//	                                                           center); a stronger one switches on cdcspec's guards
//	                                                           against deliveries TiCDC cannot make
//	upstream tables=1,2 [created=5@300,...] [resolved=TS]      the maintainer's schema and the pullers' resolved ts
//	    [schemas=T:S,...]                                      table T is in schema S (default core.DefaultSchemaID)
//	coordinator self=n0 nodes=n0,n1 [version=V] [manual]       a coordinator; input: its etcd snapshot, one
//	                                                           "changefeed cf=.. state=.. epoch=.. checkpoint=.. [progress=..]"
//	                                                           per line; unless manual, every node answers the
//	                                                           bootstrap with no maintainer
//	manager node=n1 nodes=n1,n2 [coordinator=n0]               a maintainer manager that knows its coordinator;
//	    [add-table-batch-size=N]                               N: the scheduler config's add-table-batch-size
//	orchestrator node=n1                                       a dispatcher orchestrator
//	changefeed cf=cf1 checkpoint=TS [bootstrapped]             one coordinator Changefeed (unit tests of coordinator/changefeed)
//	recv to=COMP from=NODE                                     deliver the messages of the input (see msgs_test.go)
//	deliver [from=N] [to=N] [type=T] [keep]                    deliver queued sends (the outbox) to existing components
//	outbox [clear]                                             list (or drop) the queued sends
//	tick [to=COMP] [advance=DUR] [times=N]                     advance the clock, then OnTick
//	advance by=DUR                                             advance the clock only
//	nodes alive=n0,n1                                          node-set change for the coordinator and managers
//	create|pause|resume|remove|move-changefeed cf=.. ...      coordinator API
//	move-table|split-table|remove-table on=n1 cf=.. table=T [to=N]   maintainer API
//	split-span on=n1 cf=.. id=D at=K,.. [targets=N,..] [post-finish]   split span D at the keys, or into the
//	                                                           input's spans (one a line), with those target nodes
//	                                                           and the scheduler's callback (HEAD's split operator
//	                                                           inputs; "-": no node; see cmdSplitSpan)
//	execute on=n1 cf=.. [advance=D]                          one operator-controller poll (Controller.Execute)
//	update-status                                              Changefeed.UpdateStatus with the input's "status ..." line
//	start-finished | reset-err-retry                           the add operator's PostFinish / Backoff.resetErrRetry
//	db OP [cf=..] [node=..] [flags]                            one coordinator ChangefeedDB (unit tests of
//	                                                           changefeed_db_test.go): new, add-absent, add-stopped,
//	                                                           add-replicating, stop, move-to-scheduling-queue, bind,
//	                                                           mark-scheduling, mark-replicating, mark-absent, get,
//	                                                           waiting max=N (see cmdDB)
//	sink-result on=n1 cf=.. id=D to=TS [err=..]                a sink write's outcome
//	local-fence on=n1 [cf=CF] | set-stopping on=n1 | failpoint on=n1 block-create=B not-ready-to-close=B
//	                                                           (local-fence with cf fences that DM only)
//	fail-persist                                               the coordinator's next etcd txn fails
//	state [of=COMP] [span-status] [op-finished]                observable state (span-status: each span's last
//	                                                           stored dispatcher state too; op-finished: whether
//	                                                           each span's operator IsFinished, not yet finalised)
//	barrier on=N cf=CF [coverage]                              the maintainer barrier's pending block events
//	                                                           (coverage: each one's range checker Detail too)
//	range-checker OP ...                                       one barrier coverage checker (unit tests of
//	                                                           maintainer/range_checker; see cmdRangeChecker)
//	push-event on=N cf=CF from=F                               Maintainer.pushEvent of the input's messages: the
//	                                                           block-status gate (maintainer.BlockStatusPendingSet),
//	                                                           then the maintainer's event queue
//	pop-event on=N cf=CF                                       the main loop takes the queue's head: hands it to
//	                                                           manager@N if there is one, then releases its statuses
//	block-queue on=N enqueue to=T | dequeue | sent=rK          node N's BlockStatusRequestQueue: Enqueue of the
//	                                                           input's requests (named r1, r2, ... in order), Dequeue,
//	                                                           OnSendComplete of request rK
//	spans OP ...                                               one maintainer span controller (unit tests of
//	                                                           maintainer/span; see cmdSpans)
//	setup-test-environment [node=node-a] [nodes=node-a,node-b] HEAD's setupTestEnvironment of maintainer/operator:
//	    [cf=test-changefeed] [epoch=7]                         manager@node and a bootstrapped maintainer whose
//	                                                           trigger is on node at 1, no task (see cmdTestEnvironment)
//	replica-set on=N cf=CF id=D span=tT[a,b) checkpoint=TS     a hand-made span: working on node=, else absent;
//	    [node=N] [schema=S] | replica-set on=N cf=CF remove id=D  schema default 1; remove: RemoveReplicatingSpan
//	replica-set on=N cf=CF mark-absent id=D                    MarkSpanAbsent: the span absent on no node
//	operator on=N cf=CF op=add|move|remove|occupy id=D [to=N]  an operator built by hand on span D, added to the
//	    | operator on=N cf=CF cancel id=D                      operator controller; cancel: cancelOperator
//
// COMP is coordinator, manager@NODE or orchestrator@NODE. Every command
// prints the effects its handlers returned: persisted keys, sends, sink
// writes, events and WARN/ERROR log lines that are not events.
type harness struct {
	now   int64
	opts  core.Options
	rnd   *seqRand
	up    *fakeUpstream
	lg    *logging.Logger
	logw  *lineWriter
	ids   *idAliases
	codec msgCodec

	coordSelf core.NodeID
	coord     *coordinator.Coordinator
	mgrs      map[core.NodeID]*maintainer.Manager
	orchs     map[core.NodeID]*dispatcher.Orchestrator
	cf        *coordinator.Changefeed
	db        *coordinator.ChangefeedDB

	outbox      []core.Envelope
	revision    int64
	failPersist bool
	spanStatus  bool // the current state command prints span statuses
	opFinished  bool // the current state command prints op-finished on spans

	model modelRun

	// events: the maintainers' event queues of push-event / pop-event.
	events map[eventQueueKey]*eventQueue
	// blockQueues: the nodes' block-status sending queues of block-queue,
	// with the requests enqueued so far (rK is blockReqs[K-1]).
	blockQueues map[core.NodeID]*dispatcher.BlockStatusRequestQueue
	blockReqs   []*dispatcher.BlockStatusRequestWithTarget

	// spans: the standalone span controller of the spans command.
	spans *spanControllerRun
	// rangeChecker: the checker of the range-checker command.
	rangeChecker *rangeCheckerRun
}

// eventQueueKey names one maintainer's event queue (Maintainer.eventCh).
type eventQueueKey struct {
	node core.NodeID
	cf   core.ChangefeedID
}

// eventQueue is a maintainer's event queue with its block-status gate.
type eventQueue struct {
	gate   maintainer.BlockStatusPendingSet
	events []queuedEvent
}

type queuedEvent struct {
	from    core.NodeID
	msg     core.Message
	release []maintainer.BlockStatusDedupeKey
}

func newHarness() *harness {
	h := &harness{}
	h.reset(core.Options{}, 1000)
	return h
}

func (h *harness) reset(opts core.Options, now int64) {
	h.now = now
	h.opts = opts.WithDefaults()
	h.rnd = &seqRand{}
	h.up = &fakeUpstream{created: map[int64]uint64{}, schemas: map[int64]int64{}}
	h.logw = &lineWriter{}
	h.lg = logging.New(h.logw, h, "warn")
	h.ids = newIDAliases()
	h.codec = msgCodec{ids: h.ids}
	h.coordSelf, h.coord, h.cf, h.db = "", nil, nil, nil
	h.mgrs = map[core.NodeID]*maintainer.Manager{}
	h.orchs = map[core.NodeID]*dispatcher.Orchestrator{}
	h.outbox = nil
	h.revision = 100
	h.failPersist = false
	h.model = modelRun{}
	h.events = map[eventQueueKey]*eventQueue{}
	h.blockQueues = map[core.NodeID]*dispatcher.BlockStatusRequestQueue{}
	h.blockReqs = nil
	h.spans = nil
	h.rangeChecker = nil
}

// NowMs is the logger's clock.
func (h *harness) NowMs() int64 { return h.now }

// seqRand is deterministic: Uint64 counts up from a large base (so
// dispatcher IDs are long and never collide with timestamps in printed
// strings), Float64 is 0.5 (the backoff's jitter is then exactly zero).
type seqRand struct{ n uint64 }

func (r *seqRand) Uint64() uint64   { r.n++; return (1_000_000 + r.n) << 1 }
func (r *seqRand) Float64() float64 { return 0.5 }

// fakeUpstream is the schema and puller the maintainer and dispatchers read.
type fakeUpstream struct {
	created  map[int64]uint64 // table -> CREATE TABLE commit ts (0: from the beginning)
	schemas  map[int64]int64  // table -> schema ID, where not core.DefaultSchemaID
	resolved uint64
}

// TableSchemaID implements core.SchemaSource.
func (u *fakeUpstream) TableSchemaID(t int64) int64 {
	if s, ok := u.schemas[t]; ok {
		return s
	}
	return core.DefaultSchemaID
}

func (u *fakeUpstream) ResolvedTs(span spec.Span, startTs uint64) uint64 {
	if u.resolved == 0 {
		return 0
	}
	if u.resolved < startTs {
		return startTs
	}
	return u.resolved
}

func (u *fakeUpstream) TablesAt(ts uint64) []int64 {
	var out []int64
	for t, c := range u.created {
		if c <= ts {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (u *fakeUpstream) TableCreateTs(t int64) (uint64, bool) {
	c, ok := u.created[t]
	return c, ok
}

func (u *fakeUpstream) DDLsBetween(from, to uint64) []core.DDL {
	var out []core.DDL
	for t, c := range u.created {
		if c != 0 && c > from && c <= to {
			out = append(out, core.DDL{CommitTs: c, Table: t})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CommitTs < out[j].CommitTs })
	return out
}

// idAliases names dispatcher IDs: generated ones d1, d2, ... in order of
// first appearance; IDs a scenario types (s1, old, ...) stand for themselves.
type idAliases struct {
	toAlias map[core.DispatcherID]string
	toReal  map[string]core.DispatcherID
	n       int
}

func newIDAliases() *idAliases {
	return &idAliases{toAlias: map[core.DispatcherID]string{}, toReal: map[string]core.DispatcherID{}}
}

var generatedAlias = regexp.MustCompile(`^d[0-9]+$`)

func (a *idAliases) alias(id core.DispatcherID) string {
	if id == "" {
		return "-"
	}
	if s, ok := a.toAlias[id]; ok {
		return s
	}
	a.n++
	s := "d" + strconv.Itoa(a.n)
	a.toAlias[id], a.toReal[s] = s, id
	return s
}

func (a *idAliases) resolve(s string) (core.DispatcherID, error) {
	if s == "" || s == "-" {
		return "", nil
	}
	if id, ok := a.toReal[s]; ok {
		return id, nil
	}
	if generatedAlias.MatchString(s) {
		return "", fmt.Errorf("dispatcher %s has not appeared yet (type other names, e.g. s1, for dispatchers of earlier generations)", s)
	}
	id := core.DispatcherID(s)
	a.toAlias[id], a.toReal[s] = s, id
	return id, nil
}

// resolveArg resolves the command's id= argument; it returns the text as
// given too, for messages.
func (a *idAliases) resolveArg(d *datadriven.TestData) (string, core.DispatcherID, error) {
	v, _ := arg(d, "id")
	id, err := a.resolve(v)
	return v, id, err
}

// scrub replaces real dispatcher IDs inside free text (operator strings).
func (a *idAliases) scrub(s string) string {
	ids := make([]string, 0, len(a.toAlias))
	for id := range a.toAlias {
		ids = append(ids, string(id))
	}
	sort.Slice(ids, func(i, j int) bool { return len(ids[i]) > len(ids[j]) })
	for _, id := range ids {
		s = strings.ReplaceAll(s, id, a.toAlias[core.DispatcherID(id)])
	}
	return s
}

// lineWriter keeps the log lines written since the last drain.
type lineWriter struct{ lines []string }

func (w *lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.lines = append(w.lines, l)
	}
	return len(p), nil
}

var logLineRE = regexp.MustCompile(`^\[[^\]]+\] \[([A-Z]+)\] \[[^\]]+\] \[("(?:[^"\\]|\\.)*"|[^\]]*)\]`)

// eventMessages are the canonical log messages of events: their lines are
// already printed as events.
var eventMessages = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range spec.LogLines() {
		m[l.Message] = true
	}
	return m
}()

func (h *harness) drainLog(b *strings.Builder) {
	for _, l := range h.logw.lines {
		m := logLineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		msg := m[2]
		if strings.HasPrefix(msg, "\"") {
			if u, err := strconv.Unquote(msg); err == nil {
				msg = u
			}
		}
		if eventMessages[msg] {
			continue
		}
		fmt.Fprintf(b, "%s %s\n", strings.ToLower(m[1]), msg)
	}
	h.logw.lines = nil
}

// --- effects ---

// emit prints the effects of one handler call and queues its sends. A
// coordinator's persisted txns are acknowledged at once (a revision each),
// unless fail-persist armed a failure.
func (h *harness) emit(b *strings.Builder, out *core.Effects) {
	for _, txn := range out.Persist {
		for _, op := range txn.Ops {
			b.WriteString(h.fmtMetaOp(op) + "\n")
		}
	}
	for _, env := range out.Send {
		lines := h.codec.format(env.Msg)
		fmt.Fprintf(b, "send %s->%s %s\n", env.From, env.To, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
	for _, w := range out.SinkWrites {
		fmt.Fprintf(b, "sink-write %s %s %s %s (%d,%d]\n", w.Node, cfName(w.Changefeed), h.ids.alias(w.Dispatcher), w.Span, w.FromTs, w.ToTs)
	}
	for _, e := range out.Events {
		e.Changefeed = cfName(core.ChangefeedID(e.Changefeed))
		if e.Dispatcher != "" {
			e.Dispatcher = h.ids.alias(core.DispatcherID(e.Dispatcher))
		}
		fmt.Fprintf(b, "event %s\n", e)
	}
	h.drainLog(b)
	persist := out.Persist
	if h.failPersist && len(persist) > 0 {
		// The failed txn drops the batch's sends (core.Effects).
		h.failPersist = false
		var more core.Effects
		h.coord.OnMetaResult(core.MetaResult{Token: persist[0].Token, OK: false, Err: "(injected)"}, &more)
		fmt.Fprintf(b, "persist failed: the batch's sends are dropped\n")
		h.emit(b, &more)
		return
	}
	h.outbox = append(h.outbox, out.Send...)
	if h.coord != nil {
		for _, txn := range persist {
			var more core.Effects
			r := core.MetaResult{Token: txn.Token, OK: true}
			for _, op := range txn.Ops {
				h.revision++
				if op.Kind == core.MetaDelete {
					r.Revs = append(r.Revs, 0)
				} else {
					r.Revs = append(r.Revs, h.revision)
				}
			}
			h.coord.OnMetaResult(r, &more)
			if len(more.Send)+len(more.Events)+len(more.Persist) > 0 {
				h.emit(b, &more)
			}
		}
	}
}

func (h *harness) fmtMetaOp(op core.MetaOp) string {
	key := op.Key
	if i := strings.Index(key, "/changefeed/"); i >= 0 {
		key = key[i+len("/changefeed/"):]
	}
	if op.Kind == core.MetaDelete {
		return "persist delete " + key
	}
	var v map[string]any
	_ = json.Unmarshal(op.Value, &v)
	var parts []string
	if strings.HasPrefix(key, "info/") {
		parts = append(parts, fmt.Sprintf("state=%v epoch=%v", v["state"], v["epoch"]))
		if e, ok := v["error"].(map[string]any); ok {
			parts = append(parts, fmt.Sprintf("error=%s", quoteIf(fmt.Sprint(e["Message"]))))
		}
	} else {
		prog := map[float64]string{1: "none", 2: "removing", 3: "stopping"}[v["progress"].(float64)]
		parts = append(parts, fmt.Sprintf("checkpoint=%v progress=%s", v["checkpoint-ts"], prog))
	}
	cas := ""
	switch {
	case op.ExpectModRev == 0:
		cas = " (create)"
	case op.ExpectModRev > 0:
		cas = " (cas)"
	}
	return fmt.Sprintf("persist put %s %s%s", key, strings.Join(parts, " "), cas)
}

// --- argument helpers ---

func arg(d *datadriven.TestData, key string) (string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return strings.Join(a.Vals, ","), true
		}
	}
	return "", false
}

func argU64(d *datadriven.TestData, key string) (uint64, error) {
	v, ok := arg(d, key)
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %v", key, v, err)
	}
	return n, nil
}

func argDur(d *datadriven.TestData, key string) (int64, bool, error) {
	v, ok := arg(d, key)
	if !ok {
		return 0, false, nil
	}
	dur, err := time.ParseDuration(v)
	if err != nil {
		return 0, true, fmt.Errorf("%s=%q: %v", key, v, err)
	}
	return dur.Milliseconds(), true, nil
}

func nodeList(v string) []core.NodeID {
	var out []core.NodeID
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, core.NodeID(s))
		}
	}
	return out
}

func int64List(v string) ([]int64, error) {
	var out []int64
	for _, s := range strings.Split(v, ",") {
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// inputMessages splits the input into messages: a header line and the
// indented item lines below it. Lines starting with # are comments.
func inputMessages(input string) [][]string {
	var msgs [][]string
	for _, l := range strings.Split(input, "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if strings.HasPrefix(l, " ") && len(msgs) > 0 {
			msgs[len(msgs)-1] = append(msgs[len(msgs)-1], strings.TrimSpace(l))
			continue
		}
		msgs = append(msgs, []string{strings.TrimSpace(l)})
	}
	return msgs
}

// --- routing ---

func (h *harness) deliver(b *strings.Builder, to string, from core.NodeID, msg core.Message) error {
	var out core.Effects
	switch {
	case to == "coordinator":
		if h.coord == nil {
			return fmt.Errorf("no coordinator")
		}
		h.coord.OnMessage(h.now, from, msg, &out)
	case strings.HasPrefix(to, "manager@"):
		mm := h.mgrs[core.NodeID(strings.TrimPrefix(to, "manager@"))]
		if mm == nil {
			return fmt.Errorf("no %s", to)
		}
		mm.OnMessage(h.now, from, msg, &out)
	case strings.HasPrefix(to, "orchestrator@"):
		o := h.orchs[core.NodeID(strings.TrimPrefix(to, "orchestrator@"))]
		if o == nil {
			return fmt.Errorf("no %s", to)
		}
		o.OnMessage(h.now, from, msg, &out)
	default:
		return fmt.Errorf("unknown component %q (coordinator, manager@N, orchestrator@N)", to)
	}
	h.emit(b, &out)
	return nil
}

// componentFor routes an envelope by topic, as pkg/messaging does.
func (h *harness) componentFor(env core.Envelope) (string, bool) {
	switch core.TopicOf(env.Msg) {
	case core.TopicCoordinator:
		return "coordinator", h.coord != nil && env.To == h.coordSelf
	case core.TopicMaintainerManager:
		return "manager@" + string(env.To), h.mgrs[env.To] != nil
	default:
		return "orchestrator@" + string(env.To), h.orchs[env.To] != nil
	}
}

func (h *harness) components() []string {
	var out []string
	if h.coord != nil {
		out = append(out, "coordinator")
	}
	for _, n := range core.SortedKeys(h.mgrs) {
		out = append(out, "manager@"+string(n))
	}
	for _, n := range core.SortedKeys(h.orchs) {
		out = append(out, "orchestrator@"+string(n))
	}
	return out
}

func (h *harness) tick(b *strings.Builder, comp string) error {
	var out core.Effects
	switch {
	case comp == "coordinator" && h.coord != nil:
		h.coord.OnTick(h.now, &out)
	case strings.HasPrefix(comp, "manager@") && h.mgrs[core.NodeID(comp[len("manager@"):])] != nil:
		h.mgrs[core.NodeID(comp[len("manager@"):])].OnTick(h.now, &out)
	case strings.HasPrefix(comp, "orchestrator@") && h.orchs[core.NodeID(comp[len("orchestrator@"):])] != nil:
		h.orchs[core.NodeID(comp[len("orchestrator@"):])].OnTick(h.now, &out)
	default:
		return fmt.Errorf("no component %q", comp)
	}
	h.emit(b, &out)
	return nil
}

// --- commands ---

func (h *harness) run(d *datadriven.TestData) (string, error) {
	var b strings.Builder
	err := h.command(&b, d)
	if err != nil {
		h.drainLog(&b)
		b.WriteString("error: " + err.Error() + "\n")
	}
	if b.Len() == 0 {
		b.WriteString("ok\n")
	}
	return b.String(), nil
}

func (h *harness) command(b *strings.Builder, d *datadriven.TestData) error {
	switch d.Cmd {
	case "new":
		var opts core.Options
		if v, ok := arg(d, "bugs"); ok {
			bugs, err := spec.ParseBugs(strings.Split(v, ","))
			if err != nil {
				return err
			}
			opts.Bugs = bugs
		}
		if _, ok := arg(d, "raw-watermark"); ok {
			opts.Legacy.RawWatermarkCheckpoint = true
		}
		if _, ok := arg(d, "enable-table-across-nodes"); ok {
			opts.EnableTableAcrossNodes = true
		}
		if v, ok := arg(d, "delivery"); ok {
			dl, err := spec.ParseDelivery(v)
			if err != nil {
				return err
			}
			opts.Delivery = dl
		}
		if ms, ok, err := argDur(d, "stuck"); err != nil {
			return err
		} else if ok {
			opts.ErrorStuckDurationMs = ms
		}
		now := int64(1000)
		if v, ok := arg(d, "now"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return err
			}
			now = n
		}
		h.reset(opts, now)
		fmt.Fprintf(b, "t=%d\n", h.now)
		if !h.opts.Delivery.TiCDC() {
			fmt.Fprintf(b, "delivery: %s\n", h.opts.Delivery.Label())
		}
		return nil
	case "upstream":
		if v, ok := arg(d, "tables"); ok {
			ts, err := int64List(v)
			if err != nil {
				return err
			}
			for _, t := range ts {
				h.up.created[t] = 0
			}
		}
		if v, ok := arg(d, "created"); ok {
			for _, p := range strings.Split(v, ",") {
				t, at, ok := strings.Cut(p, "@")
				tn, err1 := strconv.ParseInt(t, 10, 64)
				an, err2 := strconv.ParseUint(at, 10, 64)
				if !ok || err1 != nil || err2 != nil {
					return fmt.Errorf("created=%q: want TABLE@TS,...", v)
				}
				h.up.created[tn] = an
			}
		}
		if v, ok := arg(d, "schemas"); ok {
			for _, p := range strings.Split(v, ",") {
				t, sch, ok := strings.Cut(p, ":")
				tn, err1 := strconv.ParseInt(t, 10, 64)
				sn, err2 := strconv.ParseInt(sch, 10, 64)
				if !ok || err1 != nil || err2 != nil {
					return fmt.Errorf("schemas=%q: want TABLE:SCHEMA,...", v)
				}
				h.up.schemas[tn] = sn
			}
		}
		if _, ok := arg(d, "resolved"); ok {
			n, err := argU64(d, "resolved")
			if err != nil {
				return err
			}
			h.up.resolved = n
		}
		b.WriteString("ok\n")
		return nil
	case "coordinator":
		return h.cmdCoordinator(b, d)
	case "manager":
		v, _ := arg(d, "node")
		self := core.NodeID(v)
		mm := maintainer.NewManager(self, &h.opts, h.rnd, h.up, h.lg)
		if _, ok := arg(d, "add-table-batch-size"); ok {
			n, err := argU64(d, "add-table-batch-size")
			if err != nil {
				return err
			}
			mm.SetAddTableBatchSize(int(n))
		}
		h.mgrs[self] = mm
		var out core.Effects
		nv, _ := arg(d, "nodes")
		mm.OnNodesChanged(h.now, nodeList(nv), &out)
		coord := "n0"
		if v, ok := arg(d, "coordinator"); ok {
			coord = v
		}
		mm.OnMessage(h.now, core.NodeID(coord), &core.CoordinatorBootstrapRequest{Version: 1}, &out)
		h.emit(b, &out)
		return nil
	case "orchestrator":
		v, _ := arg(d, "node")
		h.orchs[core.NodeID(v)] = dispatcher.NewOrchestrator(core.NodeID(v), &h.opts, h.rnd, h.up, h.lg)
		b.WriteString("ok\n")
		return nil
	case "changefeed":
		name, _ := arg(d, "cf")
		cp, err := argU64(d, "checkpoint")
		if err != nil {
			return err
		}
		h.cf = coordinator.NewChangefeedForConformance(h.now, cfID(name), cp, &h.opts, h.rnd, h.lg)
		if _, ok := arg(d, "bootstrapped"); ok {
			var out core.Effects
			h.cf.UpdateStatus(h.now, core.MaintainerStatus{Changefeed: h.cf.ID, State: core.ComponentWorking, CheckpointTs: cp, BootstrapDone: true}, &out)
		}
		h.printChangefeed(b)
		return nil
	case "recv":
		to, _ := arg(d, "to")
		from, _ := arg(d, "from")
		for _, m := range inputMessages(d.Input) {
			msg, err := h.codec.parseMessage(core.NodeID(from), m[0], m[1:])
			if err != nil {
				return err
			}
			if err := h.deliver(b, to, core.NodeID(from), msg); err != nil {
				return err
			}
		}
		return nil
	case "deliver":
		return h.cmdDeliver(b, d)
	case "outbox":
		if _, ok := arg(d, "clear"); ok {
			h.outbox = nil
			b.WriteString("ok\n")
			return nil
		}
		for _, env := range h.outbox {
			fmt.Fprintf(b, "%s->%s %s\n", env.From, env.To, h.codec.format(env.Msg)[0])
		}
		return nil
	case "tick":
		adv, _, err := argDur(d, "advance")
		if err != nil {
			return err
		}
		times := 1
		if v, ok := arg(d, "times"); ok {
			if times, err = strconv.Atoi(v); err != nil {
				return err
			}
		}
		comps := h.components()
		if v, ok := arg(d, "to"); ok {
			comps = strings.Split(v, ",")
		}
		for i := 0; i < times; i++ {
			h.now += adv
			for _, c := range comps {
				if err := h.tick(b, c); err != nil {
					return err
				}
			}
		}
		return nil
	case "advance":
		adv, _, err := argDur(d, "by")
		if err != nil {
			return err
		}
		h.now += adv
		fmt.Fprintf(b, "t=%d\n", h.now)
		return nil
	case "nodes":
		v, _ := arg(d, "alive")
		alive := nodeList(v)
		var out core.Effects
		if h.coord != nil {
			h.coord.OnNodesChanged(h.now, alive, &out)
		}
		for _, n := range core.SortedKeys(h.mgrs) {
			h.mgrs[n].OnNodesChanged(h.now, alive, &out)
		}
		h.emit(b, &out)
		return nil
	case "create", "pause", "resume", "remove", "move-changefeed":
		return h.cmdAPI(b, d)
	case "execute":
		if v, _ := arg(d, "to"); v == "coordinator" {
			return h.cmdCoordinatorExecute(b, d)
		}
		return h.cmdTableAPI(b, d)
	case "split-span":
		return h.cmdSplitSpan(b, d)
	case "move-table", "split-table", "remove-table", "merge-table":
		return h.cmdTableAPI(b, d)
	case "update-status", "check-status":
		// update-status: Changefeed.UpdateStatus; check-status: the
		// backoff's CheckStatus alone, as TiCDC's backoff tests call it.
		if h.cf == nil {
			return fmt.Errorf("no changefeed")
		}
		// node=: the maintainer's node the status and its errors come from
		// (n1 unless given).
		statusNode := "n1"
		if v, ok := arg(d, "node"); ok {
			statusNode = v
		}
		for _, m := range inputMessages(d.Input) {
			f, err := parseFields(m[0])
			if err != nil {
				return err
			}
			s, err := h.codec.status(core.NodeID(statusNode), f)
			if err != nil {
				return err
			}
			if err := f.unused(); err != nil {
				return err
			}
			s.Changefeed = h.cf.ID
			var out core.Effects
			update := h.cf.UpdateStatus
			if d.Cmd == "check-status" {
				update = h.cf.BackoffCheckStatusForConformance
			}
			changed, state, rerr := update(h.now, s, &out)
			if state == "" {
				state = "(none)"
			}
			fmt.Fprintf(b, "changed=%v state=%s", changed, state)
			if rerr != nil {
				fmt.Fprintf(b, " err=%s", fmtRunningError(rerr))
			}
			b.WriteString("\n")
			h.emit(b, &out)
		}
		h.printChangefeed(b)
		return nil
	case "state-change":
		// state-change cf=C, input "event state=S [err=...] [node=N]": the
		// coordinator's handleStateChange with that event, as TiCDC's
		// TestHandleStateChange* tests call it.
		if h.coord == nil {
			return fmt.Errorf("no coordinator")
		}
		name, _ := arg(d, "cf")
		f, err := parseFields(d.Input)
		if err != nil {
			return err
		}
		if f.word != "event" || !f.has("state") {
			return fmt.Errorf("state-change: want an input line \"event state=S [err=...] [node=N]\"")
		}
		state := f.str("state")
		var rerr *core.RunningError
		if f.has("err") {
			node := "n1"
			if f.has("node") {
				node = f.str("node")
			}
			rerr = parseRunningError(f.str("err"), core.NodeID(node))
		}
		if err := f.unused(); err != nil {
			return err
		}
		var out core.Effects
		if err := h.coord.HandleStateChangeForConformance(h.now, cfID(name), state, rerr, &out); err != nil {
			return err
		}
		h.emit(b, &out)
		return nil
	case "db":
		return h.cmdDB(b, d)
	case "start-finished", "reset-err-retry":
		if h.cf == nil {
			return fmt.Errorf("no changefeed")
		}
		if d.Cmd == "start-finished" {
			h.cf.StartFinished()
		} else {
			h.cf.ResetErrRetry(h.now)
		}
		h.printChangefeed(b)
		return nil
	case "sink-result":
		on, _ := arg(d, "on")
		o := h.orchs[core.NodeID(on)]
		if o == nil {
			return fmt.Errorf("no orchestrator@%s", on)
		}
		name, _ := arg(d, "cf")
		dm := o.Get(cfID(name))
		if dm == nil {
			return fmt.Errorf("no dispatcher manager of %s on %s", name, on)
		}
		_, id, err := h.ids.resolveArg(d)
		if err != nil {
			return err
		}
		to, err := argU64(d, "to")
		if err != nil {
			return err
		}
		r := core.SinkResult{Changefeed: cfID(name), Sink: dm.SinkID(), Dispatcher: id, ToTs: to}
		if v, ok := arg(d, "err"); ok {
			r.Err = parseRunningError(v, core.NodeID(on))
		}
		var out core.Effects
		o.OnSinkResult(h.now, r, &out)
		h.emit(b, &out)
		return nil
	case "local-fence", "set-stopping", "failpoint":
		on, _ := arg(d, "on")
		switch d.Cmd {
		case "local-fence":
			o := h.orchs[core.NodeID(on)]
			if o == nil {
				return fmt.Errorf("no orchestrator@%s", on)
			}
			if name, ok := arg(d, "cf"); ok {
				dm := o.Get(cfID(name))
				if dm == nil {
					return fmt.Errorf("no dispatcher manager of %s on %s", name, on)
				}
				dm.LocalFence()
				break
			}
			o.LocalFence()
		case "set-stopping":
			mm := h.mgrs[core.NodeID(on)]
			if mm == nil {
				return fmt.Errorf("no manager@%s", on)
			}
			mm.SetStopping()
		case "failpoint":
			o := h.orchs[core.NodeID(on)]
			if o == nil {
				return fmt.Errorf("no orchestrator@%s", on)
			}
			if v, ok := arg(d, "block-create"); ok {
				o.BlockCreateDispatcher = v == "true"
			}
			if v, ok := arg(d, "not-ready-to-close"); ok {
				o.NotReadyToCloseDispatcher = v == "true"
			}
		}
		h.drainLog(b)
		b.WriteString("ok\n")
		return nil
	case "worker":
		// worker on=NODE hold|step|release: the orchestrator's worker busy
		// (requests queue and coalesce), one queued request handled, or all.
		on, _ := arg(d, "on")
		o := h.orchs[core.NodeID(on)]
		if o == nil {
			return fmt.Errorf("no orchestrator@%s", on)
		}
		var out core.Effects
		_, hold := arg(d, "hold")
		_, step := arg(d, "step")
		_, release := arg(d, "release")
		switch {
		case hold:
			o.HoldWorker()
		case step:
			o.StepWorker(h.now, &out)
		case release:
			o.ReleaseWorker(h.now, &out)
		default:
			return fmt.Errorf("worker: want hold, step or release")
		}
		n := b.Len()
		h.emit(b, &out)
		if b.Len() == n {
			b.WriteString("ok\n")
		}
		return nil
	case "fail-persist":
		h.failPersist = true
		b.WriteString("ok\n")
		return nil
	case "barrier":
		return h.cmdBarrier(b, d)
	case "push-event", "pop-event":
		return h.cmdEventQueue(b, d)
	case "block-queue":
		return h.cmdBlockQueue(b, d)
	case "range-checker":
		return h.cmdRangeChecker(b, d)
	case "spans":
		return h.cmdSpans(b, d)
	case "setup-test-environment", "replica-set", "operator":
		return h.cmdTestEnvironment(b, d)
	case "model", "model-do", "model-state":
		return h.modelCommand(b, d)
	case "state":
		comps := h.components()
		if v, ok := arg(d, "of"); ok {
			comps = strings.Split(v, ",")
		}
		_, h.spanStatus = arg(d, "span-status")
		_, h.opFinished = arg(d, "op-finished")
		defer func() { h.opFinished = false }()
		for _, c := range comps {
			if err := h.printState(b, c); err != nil {
				return err
			}
		}
		if h.cf != nil && len(comps) == 0 {
			h.printChangefeed(b)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", d.Cmd)
}

func (h *harness) cmdCoordinator(b *strings.Builder, d *datadriven.TestData) error {
	v, _ := arg(d, "self")
	h.coordSelf = core.NodeID(v)
	version := int64(1)
	if v, ok := arg(d, "version"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		version = n
	}
	var snapshot []core.KV
	for _, m := range inputMessages(d.Input) {
		f, err := parseFields(m[0])
		if err != nil {
			return err
		}
		if f.word != "changefeed" {
			return fmt.Errorf("snapshot line %q: want changefeed cf=.. state=.. epoch=.. checkpoint=.. [progress=..]", m[0])
		}
		id := cfID(f.str("cf"))
		info := coordinator.ChangeFeedInfo{State: spec.StateNormal}
		if f.has("state") {
			info.State = f.str("state")
		}
		if info.Epoch, err = f.u64("epoch"); err != nil {
			return err
		}
		if info.StartTs, err = f.u64("start"); err != nil {
			return err
		}
		if f.has("error") {
			info.Error = parseRunningError(f.str("error"), "")
		}
		cp, err := f.u64("checkpoint")
		if err != nil {
			return err
		}
		st := coordinator.ChangefeedStatus{CheckpointTs: cp, Progress: coordinator.ProgressNone}
		if f.has("progress") {
			p, ok := map[string]coordinator.Progress{"none": coordinator.ProgressNone, "removing": coordinator.ProgressRemoving,
				"stopping": coordinator.ProgressStopping}[f.str("progress")]
			if !ok {
				return fmt.Errorf("progress=%q: want none, removing or stopping", f.kv["progress"])
			}
			st.Progress = p
		}
		if err := f.unused(); err != nil {
			return err
		}
		iv, _ := json.Marshal(info)
		sv, _ := json.Marshal(st)
		h.revision++
		snapshot = append(snapshot, core.KV{Key: coordinator.InfoKey(id), Value: iv, CreateRev: h.revision, ModRev: h.revision})
		h.revision++
		snapshot = append(snapshot, core.KV{Key: coordinator.StatusKey(id), Value: sv, CreateRev: h.revision, ModRev: h.revision})
	}
	h.coord = coordinator.New(h.coordSelf, version, snapshot, &h.opts, h.rnd, h.lg)
	nv, _ := arg(d, "nodes")
	nodes := nodeList(nv)
	var out core.Effects
	h.coord.OnNodesChanged(h.now, nodes, &out)
	h.coord.OnTick(h.now, &out)
	if _, manual := arg(d, "manual"); !manual {
		// Every node answers the bootstrap with no running maintainer.
		for _, n := range nodes {
			h.coord.OnMessage(h.now, n, &core.CoordinatorBootstrapResponse{}, &out)
		}
	}
	h.emit(b, &out)
	fmt.Fprintf(b, "initialized=%v\n", h.coord.Initialized())
	return nil
}

func (h *harness) cmdDeliver(b *strings.Builder, d *datadriven.TestData) error {
	from, hasFrom := arg(d, "from")
	to, hasTo := arg(d, "to")
	typ, hasType := arg(d, "type")
	_, keep := arg(d, "keep")
	var rest []core.Envelope
	pending := h.outbox
	h.outbox = nil
	delivered := 0
	for _, env := range pending {
		if (hasFrom && string(env.From) != from) || (hasTo && string(env.To) != to) || (hasType && env.Msg.TypeName() != typ) {
			rest = append(rest, env)
			continue
		}
		comp, ok := h.componentFor(env)
		if !ok {
			rest = append(rest, env)
			continue
		}
		fmt.Fprintf(&subHeader{b}, "%s->%s %s\n", env.From, env.To, env.Msg.TypeName())
		if err := h.deliver(b, comp, env.From, env.Msg); err != nil {
			return err
		}
		delivered++
		if keep {
			rest = append(rest, env)
		}
	}
	h.outbox = append(rest, h.outbox...)
	if delivered == 0 {
		b.WriteString("nothing to deliver\n")
	}
	return nil
}

// subHeader marks where one delivery's effects start.
type subHeader struct{ b *strings.Builder }

func (s *subHeader) Write(p []byte) (int, error) { s.b.WriteString("> "); return s.b.Write(p) }

func (h *harness) cmdAPI(b *strings.Builder, d *datadriven.TestData) error {
	if h.coord == nil {
		return fmt.Errorf("no coordinator")
	}
	name, _ := arg(d, "cf")
	id := cfID(name)
	var out core.Effects
	var err error
	switch d.Cmd {
	case "create":
		start, e := argU64(d, "start")
		if e != nil {
			return e
		}
		tv, _ := arg(d, "tables")
		tables, e := int64List(tv)
		if e != nil {
			return e
		}
		err = h.coord.CreateChangefeed(h.now, id, start, tables, &out)
	case "pause":
		err = h.coord.PauseChangefeed(h.now, id, &out)
	case "resume":
		// overwrite=TS: HEAD's (TS, true); checkpoint=TS: HEAD's (TS, false).
		ow, e := argU64(d, "overwrite")
		if e != nil {
			return e
		}
		cp, e := argU64(d, "checkpoint")
		if e != nil {
			return e
		}
		if ow != 0 && cp != 0 {
			return fmt.Errorf("resume: overwrite= and checkpoint= exclude each other")
		}
		if ow != 0 {
			err = h.coord.ResumeChangefeedAt(h.now, id, ow, true, &out)
		} else {
			err = h.coord.ResumeChangefeedAt(h.now, id, cp, false, &out)
		}
	case "remove":
		err = h.coord.RemoveChangefeed(h.now, id, &out)
	case "move-changefeed":
		to, _ := arg(d, "to")
		err = h.coord.MoveChangefeed(h.now, id, core.NodeID(to), &out)
	}
	h.emit(b, &out)
	if err != nil {
		return err
	}
	return h.coord.TakeAPIError()
}

// maintainerArg is the maintainer of changefeed cf= on node on=.
func (h *harness) maintainerArg(d *datadriven.TestData) (*maintainer.Maintainer, error) {
	on, _ := arg(d, "on")
	mm := h.mgrs[core.NodeID(on)]
	if mm == nil {
		return nil, fmt.Errorf("no manager@%s", on)
	}
	name, _ := arg(d, "cf")
	m := mm.Get(cfID(name))
	if m == nil {
		return nil, fmt.Errorf("no maintainer of %s on %s", name, on)
	}
	return m, nil
}

// cmdSplitSpan is split-span: Maintainer.SplitSpan of span id into the
// parts of the input, one span a line (HEAD's splitSpans), or, with at=,
// at those keys (parts that cover the span); with the target nodes of
// targets= (none when absent; "-" is an empty node ID, as HEAD's tests
// pass); post-finish gives the split the scheduler's callback (HEAD's
// postFinish), none without it.
func (h *harness) cmdSplitSpan(b *strings.Builder, d *datadriven.TestData) error {
	m, err := h.maintainerArg(d)
	if err != nil {
		return err
	}
	v, id, err := h.ids.resolveArg(d)
	if err != nil {
		return err
	}
	var parts []spec.Span
	at, byKeys := arg(d, "at")
	switch input := strings.TrimSpace(d.Input); {
	case byKeys && input != "":
		return fmt.Errorf("split-span: at= and parts in the input both given")
	case byKeys:
		if at == "" {
			return fmt.Errorf("split-span: at= needs KEY,...")
		}
		s := m.Spans()
		span, found := spec.Span{}, false
		for _, si := range s {
			if si.ID == id {
				span, found = si.Span, true
			}
		}
		if !found {
			return fmt.Errorf("split-span: no span %s", v)
		}
		start := span.Start
		for _, k := range strings.Split(at, ",") {
			parts = append(parts, spec.Span{Table: span.Table, Start: start, End: k})
			start = k
		}
		parts = append(parts, spec.Span{Table: span.Table, Start: start, End: span.End})
	case input == "":
		return fmt.Errorf("split-span: want at=KEY,... or the parts in the input, one span a line")
	default:
		for _, l := range strings.Split(input, "\n") {
			p, err := parseSpan(strings.TrimSpace(l))
			if err != nil {
				return fmt.Errorf("split-span: %v", err)
			}
			parts = append(parts, p)
		}
	}
	var targets []core.NodeID
	if tv, ok := arg(d, "targets"); ok {
		for _, n := range strings.Split(tv, ",") {
			if n == "-" {
				n = ""
			}
			targets = append(targets, core.NodeID(n))
		}
	}
	_, postFinish := arg(d, "post-finish")
	var out core.Effects
	n := m.SplitSpan(id, parts, targets, postFinish, &out)
	fmt.Fprintf(b, "operators=%d\n", n)
	h.emit(b, &out)
	return nil
}

// cmdCoordinatorExecute is "execute to=coordinator [advance=D]": one poll
// of the coordinator's operator controller (operator.Controller.Execute),
// after advance (default 0), and nothing else of the coordinator's tick.
func (h *harness) cmdCoordinatorExecute(b *strings.Builder, d *datadriven.TestData) error {
	if h.coord == nil {
		return fmt.Errorf("no coordinator")
	}
	if _, ok := arg(d, "advance"); ok {
		adv, _, err := argDur(d, "advance")
		if err != nil {
			return err
		}
		h.now += adv
	}
	var out core.Effects
	h.coord.ExecuteOperators(h.now, &out)
	h.emit(b, &out)
	return nil
}

func (h *harness) cmdTableAPI(b *strings.Builder, d *datadriven.TestData) error {
	m, err := h.maintainerArg(d)
	if err != nil {
		return err
	}
	if d.Cmd == "execute" {
		// One poll of the operator controller (Controller.Execute), after
		// advance (default 0).
		if _, ok := arg(d, "advance"); ok {
			adv, _, err := argDur(d, "advance")
			if err != nil {
				return err
			}
			h.now += adv
		}
		var out core.Effects
		m.ExecuteOperators(h.now, &out)
		h.emit(b, &out)
		return nil
	}
	tv, _ := arg(d, "table")
	t, err := strconv.ParseInt(tv, 10, 64)
	if err != nil {
		return fmt.Errorf("table=%q: %v", tv, err)
	}
	var out core.Effects
	var n int
	switch d.Cmd {
	case "move-table":
		to, _ := arg(d, "to")
		n = m.MoveTable(t, core.NodeID(to), &out)
	case "split-table":
		n = m.SplitTable(t, &out)
	case "remove-table":
		n = m.RemoveTableDispatchers(t, &out)
	case "merge-table":
		n = m.MergeTable(t, &out)
	}
	fmt.Fprintf(b, "operators=%d\n", n)
	h.emit(b, &out)
	return nil
}

// --- state ---

func (h *harness) printState(b *strings.Builder, comp string) error {
	switch {
	case comp == "coordinator":
		if h.coord == nil {
			return fmt.Errorf("no coordinator")
		}
		for _, c := range h.coord.Changefeeds() {
			l := newLine("changefeed "+cfName(c.ID)).kv("state", c.State)
			if c.Sched != "" {
				l.kv("sched", c.Sched)
			}
			if c.Node != "" {
				l.kv("node", string(c.Node))
			}
			l.u("epoch", c.Epoch).u("checkpoint", c.Checkpoint).u("stored", c.Stored).flag("bootstrapped", c.BootstrapDone).flag("retrying", c.Retrying)
			if c.NextRetry != 0 {
				l.kv("next-retry", strconv.FormatInt(c.NextRetry, 10))
			}
			if c.Operator != "" {
				l.kv("op", strconv.Quote(cfNameIn(c.Operator)))
			}
			if c.MoveState != "" {
				l.kv("move-state", c.MoveState)
			}
			l.flag("op-finished", c.OpFinished)
			b.WriteString(l.String() + "\n")
		}
		if len(h.coord.Changefeeds()) == 0 {
			b.WriteString("no changefeeds\n")
		}
	case strings.HasPrefix(comp, "manager@"):
		mm := h.mgrs[core.NodeID(comp[len("manager@"):])]
		if mm == nil {
			return fmt.Errorf("no %s", comp)
		}
		infos := mm.Maintainers()
		if len(infos) == 0 {
			fmt.Fprintf(b, "%s: no maintainers\n", comp)
		}
		for _, mi := range infos {
			l := newLine(comp+" maintainer "+cfName(mi.Changefeed)).u("epoch", mi.Epoch).kv("state", mi.State).u("checkpoint", mi.Checkpoint).
				flag("bootstrapped", mi.Bootstrapped).flag("removal-only", mi.RemovalOnly).flag("removing", mi.Removing).flag("removed", mi.Removed)
			b.WriteString(l.String() + "\n")
			m := mm.Get(mi.Changefeed)
			for _, s := range m.Spans() {
				sl := newLine("  span "+h.ids.alias(s.ID)).kv("span", s.Span.String())
				if s.SchemaID != core.DefaultSchemaID {
					sl.kv("schema", strconv.FormatInt(s.SchemaID, 10))
				}
				sl.kv("state", s.State)
				if s.Node != "" {
					sl.kv("node", string(s.Node))
				}
				sl.u("checkpoint", s.Checkpoint)
				if h.spanStatus {
					sl.kv("status", s.Status.String())
				}
				if s.Operator != "" {
					sl.kv("op", strconv.Quote(h.ids.scrub(s.Operator)))
					if h.opFinished {
						sl.flag("op-finished", s.OpFinished)
					}
				}
				b.WriteString(sl.String() + "\n")
			}
		}
	case strings.HasPrefix(comp, "orchestrator@"):
		o := h.orchs[core.NodeID(comp[len("orchestrator@"):])]
		if o == nil {
			return fmt.Errorf("no %s", comp)
		}
		dms := o.Managers()
		if len(dms) == 0 {
			fmt.Fprintf(b, "%s: no dispatcher managers\n", comp)
		}
		ds := o.Dispatchers()
		for _, dm := range dms {
			l := newLine(comp+" dm "+cfName(dm.Changefeed)).kv("maintainer", string(dm.MaintainerID)).u("epoch", dm.Epoch).kv("journal", strconv.Itoa(dm.Journal))
			if dm.MergeJournal > 0 {
				l.kv("merges", strconv.Itoa(dm.MergeJournal))
			}
			if dm.Err != "" {
				l.kv("err", quoteIf(dm.Err))
			}
			b.WriteString(l.String() + "\n")
			for _, di := range ds {
				if di.Changefeed != dm.Changefeed {
					continue
				}
				dl := newLine("  dispatcher "+h.ids.alias(di.ID)).kv("span", di.Span.String()).kv("state", di.State).u("checkpoint", di.Checkpoint).flag("trigger", di.Trigger)
				if len(di.PendingDDLs) > 0 {
					var ps []string
					for _, p := range di.PendingDDLs {
						ps = append(ps, strconv.FormatUint(p, 10))
					}
					dl.kv("pending-ddls", strings.Join(ps, ","))
				}
				b.WriteString(dl.String() + "\n")
			}
		}
	default:
		return fmt.Errorf("unknown component %q", comp)
	}
	return nil
}

// cfNameIn strips the default keyspace from free text.
func cfNameIn(s string) string { return strings.ReplaceAll(s, "default/", "") }

func (h *harness) printChangefeed(b *strings.Builder) {
	st := h.cf.Status()
	bv := h.cf.BackoffView()
	l := newLine("changefeed "+cfName(h.cf.ID)).u("checkpoint", st.CheckpointTs).flag("bootstrapped", st.BootstrapDone)
	if len(st.Err) > 0 {
		l.kv("err", fmtRunningError(&st.Err[len(st.Err)-1]))
	}
	b.WriteString(l.String() + "\n")
	bl := newLine("backoff").flag("should-run", h.cf.ShouldRun(h.now)).flag("failed", bv.Failed).flag("retrying", bv.Retrying).
		flag("restarting", bv.Restarting).u("baseline", bv.Baseline)
	if bv.NextRetryTime != 0 {
		bl.kv("next-retry", fmt.Sprintf("+%d", bv.NextRetryTime-h.now))
	}
	b.WriteString(bl.String() + "\n")
}

// cmdDB drives one ChangefeedDB the way TiCDC's changefeed_db_test.go does.
// A changefeed is made on its first add as changefeed.NewChangefeed would
// (checkpoint=TS, default 0), with its backoff's baseline=TS (default the
// checkpoint) and failed/restarting flags set as the TiCDC test sets them.
// Every changing operation prints the DB's views afterwards.
func (h *harness) cmdDB(b *strings.Builder, d *datadriven.TestData) error {
	if len(d.CmdArgs) == 0 {
		return fmt.Errorf("db: want an operation")
	}
	op := d.CmdArgs[0].Key
	if op == "new" {
		h.db = coordinator.NewChangefeedDBForConformance(h.lg)
		h.printDB(b)
		return nil
	}
	if h.db == nil {
		return fmt.Errorf("db %s: no ChangefeedDB (db new)", op)
	}
	name, _ := arg(d, "cf")
	id := cfID(name)
	node, _ := arg(d, "node")
	_, flagRemove := arg(d, "remove")
	cfOf := func() (*coordinator.Changefeed, error) {
		cf := h.db.GetByID(id)
		if cf == nil {
			return nil, fmt.Errorf("db %s: no changefeed %s", op, name)
		}
		return cf, nil
	}
	switch op {
	case "add-absent", "add-stopped", "add-replicating":
		cp, err := argU64(d, "checkpoint")
		if err != nil {
			return err
		}
		baseline := cp
		if _, ok := arg(d, "baseline"); ok {
			if baseline, err = argU64(d, "baseline"); err != nil {
				return err
			}
		}
		_, failed := arg(d, "failed")
		cf := coordinator.NewChangefeedForConformance(h.now, id, cp, &h.opts, h.rnd, h.lg)
		cf.SetBackoffForConformance(baseline, failed, false)
		switch op {
		case "add-absent":
			h.db.AddAbsentChangefeed(cf)
		case "add-stopped":
			h.db.AddStoppedChangefeed(cf)
		default:
			h.db.AddReplicatingMaintainer(cf, core.NodeID(node))
		}
	case "stop":
		fmt.Fprintf(b, "node=%q\n", string(h.db.StopByChangefeedID(id, flagRemove)))
	case "move-to-scheduling-queue":
		_, reset := arg(d, "reset-backoff")
		h.db.MoveToSchedulingQueue(h.now, id, reset)
	case "bind", "mark-scheduling", "mark-replicating", "mark-absent", "restarting":
		cf, err := cfOf()
		if err != nil {
			return err
		}
		switch op {
		case "bind":
			h.db.BindChangefeedToNode(cf, core.NodeID(node))
		case "mark-scheduling":
			h.db.MarkMaintainerScheduling(cf)
		case "mark-replicating":
			h.db.MarkMaintainerReplicating(cf)
		case "mark-absent":
			h.db.MarkMaintainerAbsent(cf)
		case "restarting":
			v := cf.BackoffView()
			cf.SetBackoffForConformance(v.Baseline, v.Failed, true)
		}
	case "get":
		cf := h.db.GetByID(id)
		if cf == nil {
			b.WriteString("nil\n")
			return nil
		}
		b.WriteString(h.dbLine(cf) + "\n")
		return nil
	case "waiting":
		v, _ := arg(d, "max")
		maxSize, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("db waiting max=%q: %v", v, err)
		}
		cfs, sizes := h.db.GetWaitingSchedulingChangefeeds(h.now, maxSize)
		fmt.Fprintf(b, "waiting: %s\nsize-per-node: %s\n", dbNames(cfs), fmtSizes(sizes))
		return nil
	default:
		return fmt.Errorf("db: unknown operation %q", op)
	}
	h.drainLog(b)
	h.printDB(b)
	return nil
}

func dbNames(cfs []*coordinator.Changefeed) string {
	var names []string
	for _, cf := range cfs {
		names = append(names, cfName(cf.ID))
	}
	return "[" + strings.Join(names, " ") + "]"
}

func fmtSizes(m map[core.NodeID]int) string {
	var parts []string
	for _, n := range core.SortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", n, m[n]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func (h *harness) dbLine(cf *coordinator.Changefeed) string {
	v := cf.BackoffView()
	l := newLine("changefeed "+cfName(cf.ID)).flag("stopped", h.db.IsStopped(cf.ID))
	if cf.NodeID() != "" {
		l.kv("node", string(cf.NodeID()))
	}
	l.u("checkpoint", cf.Status().CheckpointTs).u("baseline", v.Baseline).flag("failed", v.Failed).flag("restarting", v.Restarting)
	return l.String()
}

// printDB prints the ChangefeedDB's views: every changefeed, then the
// absent (runnable), scheduling, replicating and stopped sets, the sizes,
// and the tasks per node.
func (h *harness) printDB(b *strings.Builder) {
	for _, id := range h.db.IDs() {
		b.WriteString(h.dbLine(h.db.GetByID(id)) + "\n")
	}
	var stopped []*coordinator.Changefeed
	for _, id := range h.db.IDs() {
		if h.db.IsStopped(id) {
			stopped = append(stopped, h.db.GetByID(id))
		}
	}
	fmt.Fprintf(b, "absent: %s scheduling: %s replicating: %s stopped: %s\n",
		dbNames(h.db.GetAbsent(h.now)), dbNames(h.db.GetScheduling()), dbNames(h.db.GetReplicating()), dbNames(stopped))
	fmt.Fprintf(b, "size=%d absent-size=%d stopped-size=%d size-per-node: %s\n",
		h.db.GetSize(), h.db.GetAbsentSize(), h.db.GetStoppedSize(), fmtSizes(h.db.GetTaskSizePerNode()))
	sizes := h.db.GetTaskSizePerNode()
	for _, n := range core.SortedKeys(sizes) {
		fmt.Fprintf(b, "by-node %s: %s\n", n, dbNames(h.db.GetByNodeID(n)))
	}
}

// cmdBarrier prints the pending block events of a maintainer's barrier, as
// HEAD's barrier tests read barrier.blockedEvents.
func (h *harness) cmdBarrier(b *strings.Builder, d *datadriven.TestData) error {
	m, err := h.maintainerArg(d)
	if err != nil {
		return err
	}
	evs := m.BlockEvents()
	if len(evs) == 0 {
		b.WriteString("no block events\n")
	}
	for _, ev := range evs {
		l := newLine("block-event").u("ts", ev.CommitTs).flag("syncpoint", ev.IsSyncPoint).flag("selected", ev.Selected)
		if ev.Writer != "" {
			l.kv("writer", h.ids.alias(ev.Writer))
		}
		l.flag("writer-advanced", ev.WriterAdvanced)
		var rs []string
		for _, id := range ev.Reported {
			rs = append(rs, h.ids.alias(id))
		}
		if len(rs) > 0 {
			l.kv("reported", strings.Join(rs, ","))
		}
		if ev.Range != nil {
			var ts []string
			for _, t := range ev.Range {
				ts = append(ts, strconv.FormatInt(t, 10))
			}
			l.kv("range", strings.Join(ts, ","))
		}
		b.WriteString(l.String() + "\n")
		if _, ok := arg(d, "coverage"); ok && ev.Range != nil {
			fmt.Fprintf(b, "  coverage: %q\n", ev.Coverage)
		}
	}
	if ks := m.PendingScheduleKeys(); len(ks) > 0 {
		var ts []string
		for _, k := range ks {
			ts = append(ts, strconv.FormatUint(k, 10))
		}
		b.WriteString("pending-schedule " + strings.Join(ts, ",") + "\n")
	}
	return nil
}

// cmdEventQueue: push-event runs Maintainer.pushEvent (maintainer.go:1411-
// 1417 at b813e76f9) on each input message: the block-status gate, then the
// queue; pop-event is one turn of the main loop (maintainer.go:1393-1399):
// the head is handled (by manager@N when the story has one) and its
// statuses are released.
func (h *harness) cmdEventQueue(b *strings.Builder, d *datadriven.TestData) error {
	on, _ := arg(d, "on")
	cf, _ := arg(d, "cf")
	if on == "" || cf == "" {
		return fmt.Errorf("%s: want on=NODE cf=CF", d.Cmd)
	}
	k := eventQueueKey{core.NodeID(on), cfID(cf)}
	q := h.events[k]
	if q == nil {
		q = &eventQueue{}
		h.events[k] = q
	}
	if d.Cmd == "push-event" {
		from, _ := arg(d, "from")
		if from == "" {
			return fmt.Errorf("push-event: want from=NODE")
		}
		for _, m := range inputMessages(d.Input) {
			msg, err := h.codec.parseMessage(core.NodeID(from), m[0], m[1:])
			if err != nil {
				return err
			}
			out, keys, kept := q.gate.Filter(core.NodeID(from), msg)
			if !kept {
				fmt.Fprintf(b, "suppressed: %s\n", h.codec.format(msg)[0])
				continue
			}
			q.events = append(q.events, queuedEvent{from: core.NodeID(from), msg: out, release: keys})
			how := "a filtered copy"
			if out == msg {
				how = "the same message"
			}
			fmt.Fprintf(b, "queued %s, %d release keys:\n", how, len(keys))
			for _, l := range h.codec.format(out) {
				b.WriteString("  " + l + "\n")
			}
		}
	} else {
		if len(q.events) == 0 {
			fmt.Fprintf(b, "queue empty\n")
		} else {
			e := q.events[0]
			q.events = q.events[1:]
			fmt.Fprintf(b, "handled: %s (releases %d)\n", h.codec.format(e.msg)[0], len(e.release))
			if mm := h.mgrs[k.node]; mm != nil {
				if err := h.deliver(b, "manager@"+on, e.from, e.msg); err != nil {
					return err
				}
			}
			q.gate.Release(e.release)
		}
	}
	fmt.Fprintf(b, "queue: %d events; pending statuses: %d\n", len(q.events), q.gate.Len())
	return nil
}

// cmdBlockQueue drives one node's dispatcher.BlockStatusRequestQueue as
// HEAD's heartbeat_queue_test.go drives BlockStatusRequestQueue.
func (h *harness) cmdBlockQueue(b *strings.Builder, d *datadriven.TestData) error {
	on, _ := arg(d, "on")
	if on == "" {
		return fmt.Errorf("block-queue: want on=NODE")
	}
	q := h.blockQueues[core.NodeID(on)]
	if q == nil {
		q = &dispatcher.BlockStatusRequestQueue{}
		h.blockQueues[core.NodeID(on)] = q
	}
	name := func(r *dispatcher.BlockStatusRequestWithTarget) string {
		for i, x := range h.blockReqs {
			if x == r {
				return "r" + strconv.Itoa(i+1)
			}
		}
		return "?"
	}
	_, enqueue := arg(d, "enqueue")
	_, dequeue := arg(d, "dequeue")
	sent, isSent := arg(d, "sent")
	switch {
	case enqueue:
		to, _ := arg(d, "to")
		if to == "" {
			return fmt.Errorf("block-queue enqueue: want to=NODE")
		}
		for _, m := range inputMessages(d.Input) {
			msg, err := h.codec.parseMessage(core.NodeID(on), m[0], m[1:])
			if err != nil {
				return err
			}
			req, ok := msg.(*core.BlockStatusRequest)
			if !ok {
				return fmt.Errorf("block-queue enqueue: %s is not a BlockStatusRequest", m[0])
			}
			r := &dispatcher.BlockStatusRequestWithTarget{Target: core.NodeID(to), Request: req}
			h.blockReqs = append(h.blockReqs, r)
			if q.Enqueue(r) {
				fmt.Fprintf(b, "%s queued\n", name(r))
			} else {
				fmt.Fprintf(b, "%s dropped: every status is queued or in flight\n", name(r))
			}
		}
	case dequeue:
		r := q.Dequeue()
		if r == nil {
			b.WriteString("nothing queued\n")
			break
		}
		fmt.Fprintf(b, "dequeued %s:\n", name(r))
		for _, l := range h.codec.format(r.Request) {
			b.WriteString("  " + l + "\n")
		}
	case isSent:
		i, err := strconv.Atoi(strings.TrimPrefix(sent, "r"))
		if err != nil || !strings.HasPrefix(sent, "r") || i < 1 || i > len(h.blockReqs) {
			return fmt.Errorf("block-queue sent=%q: want r1..r%d", sent, len(h.blockReqs))
		}
		q.OnSendComplete(h.blockReqs[i-1])
		fmt.Fprintf(b, "%s sent\n", sent)
	default:
		return fmt.Errorf("block-queue: want enqueue, dequeue or sent=rK")
	}
	fmt.Fprintf(b, "queued requests: %d\n", q.Len())
	return nil
}

package traces

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
)

// GenOptions shape a generated log.
type GenOptions struct {
	// Seed makes the output a pure function of (size, options).
	Seed uint64
	// Changefeeds is how many changefeeds the log's lines name (default 8).
	Changefeeds int
	// Storm puts every changefeed in an error storm: each keeps reporting
	// a sink error, the maintainer keeps forwarding it and the coordinator
	// keeps backing off, interleaved with failed control-message sends and
	// unresolved block events: the densest log the checker's findings can
	// meet.
	Storm bool
}

// GenerateLog writes about size bytes of a healthy TiCDC-like log with
// seed; see GenerateLogOptions.
func GenerateLog(w io.Writer, size int64, seed uint64) (lines int64, err error) {
	return GenerateLogOptions(w, size, GenOptions{Seed: seed})
}

// The generated mix follows a TiCDC HEAD (b813e76f9) capture at INFO: most
// records are the data path's (log puller subscriptions and slow-region
// reports with a struct value, sink retries with a long quoted error of
// escaped JSON), a third the control plane's periodic lines (dispatchers'
// WAITING block-status re-sends, the barrier's scheduling, message-center
// targets), and a few percent the lifecycle lines the checker turns into
// events (dispatchers created, working, removed; operators; block events
// created and done). Field names, spellings and value shapes are HEAD's:
// keyspace/name changefeed IDs, 128-bit dispatcher IDs, FormatTableSpan
// spans with hex keys, TSOs. Lines are 120-900 bytes, about 330 on
// average, like HEAD's; a few records wrap over several lines.
const (
	genTSO  = int64(463424440748738003)
	genNode = "6a3e0b8e-7c1d-4e8a-9c4e-5b2f0d9a00"
)

// GenerateLogOptions writes about size bytes of a generated TiCDC HEAD log
// and returns the number of lines written.
func GenerateLogOptions(w io.Writer, size int64, o GenOptions) (lines int64, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	g := newLogGen(o)
	var written int64
	var buf []byte
	for written < size {
		var extra int64
		buf, extra = g.record(buf[:0])
		lines += extra
		buf = append(buf, '\n')
		n, err := bw.Write(buf)
		written += int64(n)
		lines++
		if err != nil {
			return lines, err
		}
	}
	return lines, bw.Flush()
}

// genTables is how many tables (one dispatcher each) a generated log names.
const genTables = 64

// logGen is a generated log's state between records: the clock, the
// dispatchers' lifecycles and block statuses, the running operator, the
// open block event, and each changefeed's place in its error storm. Every
// draw comes from rng, in record order, so the log is a pure function of
// (size, options).
type logGen struct {
	o        GenOptions
	seed     uint64
	rng      *rand.Rand
	cfs      int // changefeeds
	ds       []genDisp
	ms       int64 // the clock, Unix ms
	op       int64 // the running operator, 0 if none
	block    int64 // the open block event's commitTs, 0 if none
	stormErr []int // per changefeed: the storm lines so far
}

// genDisp is one table's dispatcher in a generated log.
type genDisp struct {
	id      int64
	created bool
	waiting bool // a WAITING block status is being re-sent
	resends int
}

func newLogGen(o GenOptions) *logGen {
	g := &logGen{o: o, seed: o.Seed, cfs: o.Changefeeds, ms: 1784709015758} // 2026/07/22 16:30:15.758 UTC
	g.rng = rand.New(rand.NewPCG(g.seed, g.seed^0x9e3779b97f4a7c15))
	if g.cfs <= 0 {
		g.cfs = 8
	}
	g.ds = make([]genDisp, genTables)
	for i := range g.ds {
		g.ds[i].id = int64(7564853129434423808 + i*7919)
	}
	g.stormErr = make([]int, g.cfs)
	return g
}

func genDispID(id int64) string { return fmt.Sprintf("%d.%d", id, id^0x5bd1e995) }

func genSpanOf(t int) string {
	return fmt.Sprintf("tableID: %d, startKey: 7480000000000000ff%02x5f720000000000fa, endKey: 7480000000000000ff%02x5f730000000000fa, keyspaceID: 0", 100+t, t, t)
}

// record appends the next record, without its final newline, and returns
// how many lines beyond the first it spans (a wrapped record).
func (g *logGen) record(buf []byte) ([]byte, int64) {
	rng := g.rng
	g.ms += int64(rng.IntN(3))
	buf = appendTime(buf, g.ms)
	r := rng.IntN(1000)
	cf := rng.IntN(g.cfs)
	tso := g.ms << 18 // a TSO of the record's own time (its physical part is ms)
	if g.o.Storm && r < 400 {
		return g.stormLine(buf, cf, tso), 0
	}
	const tables = genTables
	switch {
	case r < 400:
		buf = fmt.Appendf(buf, ` [INFO] [span_registry.go:328] ["subscription client finds a initialized slow region"] [subscriptionID=%d] [slowRegion="{RegionID:%d CheckpointTs:%d Initialized:true Created:2026-07-22 16:29:58.%03d +0000 UTC StoreAddr:10.0.%d.%d:20160 Span:[7480000000000000ff%02x5f72, 7480000000000000ff%02x5f73)}"]`,
			rng.IntN(1<<16), rng.IntN(1<<20), tso-int64(rng.IntN(1<<28)), rng.IntN(1000), rng.IntN(4), rng.IntN(250), rng.IntN(tables), rng.IntN(tables))
	case r < 520:
		buf = fmt.Appendf(buf, ` [INFO] [subscription_client.go:512] ["subscribe table span"] [subscriptionID=%d] [span="{table_id:%d,start_key:7480000000000000ff%02x5f72,end_key:7480000000000000ff%02x5f73}"] [startTs=%d] [bdrMode=false]`,
			rng.IntN(1<<16), 100+rng.IntN(tables), rng.IntN(tables), rng.IntN(tables), tso)
	case r < 580:
		buf = fmt.Appendf(buf, ` [WARN] [mysql_writer.go:551] ["execute DMLs with error, retry later"] [changefeedID=default/cf-%d] [error="[CDC:ErrMySQLTxnError]MySQL txn error: Error 1213 (40001): Deadlock found when trying to get lock; try restarting transaction, dmlInfo=[{\"Type\":\"update\",\"Database\":\"app_%d\",\"Table\":\"orders\",\"StartTs\":%d,\"PrimaryKeys\":[{\"Name\":\"id\",\"Value\":%d}]}]"] [retry=%d]`,
			cf, rng.IntN(100), tso, rng.IntN(1<<30), rng.IntN(5))
	case r < 585:
		// a wrapped record: the value holds newlines
		buf = fmt.Appendf(buf, " [WARN] [basic_dispatcher.go:615] [\"handle events slowly\"] [changefeedID=default/cf-%d] [detail=\"first part\n        second part: %d\n        third part\"] [lag=%dms]", cf, rng.IntN(1000), rng.IntN(900))
		return buf, 2
	case r < 720:
		buf = g.blockStatusLine(buf, tso)
	case r < 800:
		buf = g.barrierLine(buf, tso)
	case r < 850:
		buf = fmt.Appendf(buf, ` [INFO] [message_center.go:204] ["Add remote target"] [localID=%s01] [localAddr=10.0.1.1:8300] [remoteID=%s%02d] [remoteAddr=10.0.1.%d:8300]`, genNode, genNode, rng.IntN(3)+1, rng.IntN(3)+1)
	case r < 975:
		buf = g.dispatcherLine(buf, tso)
	default:
		buf = g.operatorLine(buf)
	}
	return buf, 0
}

// stormLine appends changefeed cf's next storm line: the DM's error, the
// maintainer's forward, the coordinator's backoff, a failed send, an
// unresolved block event, in turn.
func (g *logGen) stormLine(buf []byte, cf int, tso int64) []byte {
	node := genNode + fmt.Sprintf("%02d", cf%3+1)
	errText := fmt.Sprintf(`[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed: keyspace=default, changefeed=cf-%d, eventType=dml, dmlInfo=[{\"Type\":\"update\",\"Database\":\"app_%d\",\"Table\":\"orders\",\"CommitTs\":%d}]; ErrorInfo:read tcp 10.0.1.%d:56834->10.193.7.142:9092: i/o timeout`, cf, cf%100, tso, cf%250)
	switch g.stormErr[cf] % 5 {
	case 0:
		buf = fmt.Appendf(buf, ` [ERROR] [dispatcher_manager.go:500] ["Event Dispatcher Manager Meets Error"] [changefeedID=default/cf-%d] [error="%s"]`, cf, errText)
	case 1:
		buf = fmt.Appendf(buf, ` [ERROR] [maintainer.go:785] ["dispatcher report an error"] [changefeedID=default/cf-%d] [sourceNode=%s] [error="%s"]`, cf, node, errText)
	case 2:
		buf = fmt.Appendf(buf, ` [ERROR] [backoff.go:157] ["changefeed maintainer report an error"] [changefeed=default/cf-%d] [checkpointTs=%d] [node=%s] [code=CDC:ErrChangefeedRetryable] [state=warning] [error="%s"]`, cf, tso-1<<30, node, errText)
	case 3:
		buf = fmt.Appendf(buf, ` [ERROR] [heartbeat_collector.go:150] ["failed to send heartbeat messages"] [changefeedID=default/cf-%d] [error="[CDC:ErrMessageSendFailed]send message to %s failed: connection refused"]`, cf, node)
	default:
		buf = fmt.Appendf(buf, ` [WARN] [barrier_event.go:676] ["barrier event is not resolved"] [changefeed=cf-%d] [commitTs=%d] [isSyncPoint=false] [selected=false] [writerDispatcherAdvanced=false] [blocker="{InfluenceType:1 TableIDs:[%d]}"] [resend="[]"] [mode=0]`, cf, genTSO+int64(cf)<<20, 100+cf%genTables)
	}
	g.stormErr[cf]++
	return buf
}

// blockStatusLine appends a WAITING block status of a random dispatcher:
// set, re-sent three times, cancelled.
func (g *logGen) blockStatusLine(buf []byte, tso int64) []byte {
	d := &g.ds[g.rng.IntN(genTables)]
	switch {
	case !d.waiting:
		buf = fmt.Appendf(buf, ` [INFO] [helper.go:50] ["set resend task"] [identifier="{CommitTs:%d IsSyncPoint:false}"] [taskDispatcherID=%s]`, tso, genDispID(d.id))
		d.waiting, d.resends = true, 0
	case d.resends < 3:
		d.resends++
		buf = fmt.Appendf(buf, ` [INFO] [helper.go:379] ["resend task periodic resend"] [dispatcherID=%s] [executeCount=%d]`, genDispID(d.id), d.resends*10)
	default:
		buf = fmt.Appendf(buf, ` [INFO] [basic_dispatcher.go:1216] ["cancel resend task"] [dispatcherID=%s] [identifier="{CommitTs:%d IsSyncPoint:false}"]`, genDispID(d.id), tso)
		d.waiting = false
	}
	return buf
}

// barrierLine appends the barrier's next line: a block event created,
// scheduled, done.
func (g *logGen) barrierLine(buf []byte, tso int64) []byte {
	seed, first := g.seed, genDispID(g.ds[0].id)
	if g.block == 0 {
		g.block = tso
		return fmt.Appendf(buf, ` [INFO] [barrier_event.go:130] ["new block event is created"] [changefeedID=cf-bench-%d] [dispatcher=%s] [blockTs=%d] [syncPoint=false] [needSchedule=true] [mode=0] [blockedType=Normal] [blockedTableCount=1] [blockedSchemaID=0] [dropType=Normal]`, seed, first, g.block)
	}
	if g.rng.IntN(3) > 0 {
		return fmt.Appendf(buf, ` [INFO] [barrier.go:583] ["event trySchedule"] [changefeed=cf-bench-%d] [writerDispatcher=%s] [EventCommitTs=%d] [mode=0]`, seed, first, g.block)
	}
	buf = fmt.Appendf(buf, ` [INFO] [barrier.go:570] ["all dispatchers reported event done, remove event"] [changefeed=cf-bench-%d] [commitTs=%d] [mode=0]`, seed, g.block)
	g.block = 0
	return buf
}

// dispatcherLine appends a random dispatcher's next lifecycle line:
// created, working, removed (a waiting one re-sends its block status).
func (g *logGen) dispatcherLine(buf []byte, tso int64) []byte {
	t := g.rng.IntN(genTables)
	d := &g.ds[t]
	seed := g.seed
	switch {
	case d.waiting:
		buf = fmt.Appendf(buf, ` [INFO] [helper.go:379] ["resend task periodic resend"] [dispatcherID=%s] [executeCount=%d]`, genDispID(d.id), 10)
	case !d.created:
		buf = fmt.Appendf(buf, ` [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf-bench-%d] [dispatcherID=%s] [tableSpan="%s"] [startTs=%d] [skipDMLAsStartTs=false]`, seed,
			genDispID(d.id), genSpanOf(t), tso)
		d.created = true
	case g.rng.IntN(2) == 0:
		buf = fmt.Appendf(buf, ` [INFO] [basic_dispatcher.go:540] ["update dispatcher status to working"] [changefeedID=default/cf-bench-%d] [dispatcher=%s] [table="%s"] [checkpointTs=%d] [resolvedTs=%d]`, seed,
			genDispID(d.id), genSpanOf(t), tso, tso)
	default:
		buf = fmt.Appendf(buf, ` [INFO] [dispatcher_manager.go:1250] ["event dispatcher completely stopped, and delete it from event dispatcher manager"] [changefeedID=default/cf-bench-%d] [dispatcherID=%s]`, seed, genDispID(d.id))
		d.created = false
		d.id += genTables
	}
	return buf
}

// operatorLine appends an operator's start, or the running one's finish.
func (g *logGen) operatorLine(buf []byte) []byte {
	if g.op == 0 {
		g.op = int64(5000000 + g.rng.IntN(1<<20))
		return fmt.Appendf(buf, ` [INFO] [operator_controller.go:511] ["add operator to running queue"] [role=maintainer] [changefeedID=default/cf-bench-%d] [operator="add dispatcher operator: %d, dest:%s01"]`, g.seed, g.op, genNode)
	}
	buf = fmt.Appendf(buf, ` [INFO] [operator_controller.go:449] ["operator finished"] [role=maintainer] [changefeedID=default/cf-bench-%d] [operatorID=%d] [operator="add dispatcher operator: %d, dest:%s01"]`, g.seed, g.op, g.op, genNode)
	g.op = 0
	return buf
}

// appendTime appends "[2026/07/22 16:30:15.758 +00:00]" for Unix ms.
func appendTime(b []byte, ms int64) []byte {
	days := ms / 86400000
	rem := ms % 86400000
	y, m, d := civilFromDays(days)
	h := rem / 3600000
	mi := rem / 60000 % 60
	s := rem / 1000 % 60
	f := rem % 1000
	return fmt.Appendf(b, "[%04d/%02d/%02d %02d:%02d:%02d.%03d +00:00]", y, m, d, h, mi, s, f)
}

func civilFromDays(z int64) (int64, int64, int64) {
	z += 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

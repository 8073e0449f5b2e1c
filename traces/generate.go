package traces

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
)

// GenerateLog writes about size bytes of a healthy TiCDC-like log for
// benchmarks: mostly data-path INFO lines the catalogue does not know, a few
// percent of catalogued control-plane lines (dispatchers created, working
// and removed in a consistent order, operators), long quoted errors with
// escaped JSON, values with brackets and spaces, and wrapped multi-line
// records. It returns the number of lines written. The output is a pure
// function of size and seed.
func GenerateLog(w io.Writer, size int64, seed uint64) (lines int64, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const tables = 64
	type disp struct {
		id      int64
		created bool
	}
	ds := make([]disp, tables)
	for i := range ds {
		ds[i].id = int64(1000000 + i)
	}
	ms := int64(1784709015758) // 2026/07/22 16:30:15.758 UTC
	var written int64
	var buf []byte
	var op int64 // the running operator, 0 if none
	for written < size {
		ms += int64(rng.IntN(3))
		buf = buf[:0]
		buf = appendTime(buf, ms)
		r := rng.IntN(1000)
		cf := rng.IntN(8)
		switch {
		case r < 560:
			buf = fmt.Appendf(buf, ` [INFO] [event_collector.go:412] ["dispatcher received events"] [changefeedID=default/cf-%d] [dispatcherID=%d] [count=%d] [resolvedTs=%d] [lag=%dms]`,
				cf, 1000000+rng.IntN(tables), rng.IntN(500), 463424440748738003+ms, rng.IntN(900))
		case r < 760:
			buf = fmt.Appendf(buf, ` [INFO] [region_request_worker.go:318] ["region feed started"] [regionID=%d] [span="[7480000000000000ff%02x5f72, 7480000000000000ff%02x5f73)"] [storeAddr=10.0.%d.%d:20160] [took=%d.%dms]`,
				rng.IntN(1<<20), rng.IntN(tables), rng.IntN(tables), rng.IntN(4), rng.IntN(250), rng.IntN(40), rng.IntN(10))
		case r < 860:
			buf = fmt.Appendf(buf, ` [DEBUG] [sink.go:221] [flushed] [changefeed=default/cf-%d] [count=%d] [commitTs=%d]`, cf, rng.IntN(100), 463424440748738003+ms)
		case r < 920:
			buf = fmt.Appendf(buf, ` [WARN] [mysql_writer.go:551] ["execute DMLs with error, retry later"] [changefeedID=default/cf-%d] [error="[CDC:ErrMySQLTxnError]MySQL txn error: Error 1213 (40001): Deadlock found when trying to get lock; try restarting transaction, dmlInfo=[{\"Type\":\"update\",\"Database\":\"app_%d\",\"Table\":\"orders\",\"StartTs\":%d,\"PrimaryKeys\":[{\"Name\":\"id\",\"Value\":%d}]}]"] [retry=%d]`,
				cf, rng.IntN(100), 463424440748738003+ms, rng.IntN(1<<30), rng.IntN(5))
		case r < 925:
			// a wrapped record: the error value holds newlines
			buf = fmt.Appendf(buf, " [WARN] [txn.go:88] [\"slow txn\"] [changefeedID=default/cf-%d] [detail=\"first part\n        second part: %d\n        third part\"]", cf, rng.IntN(1000))
			lines += 2
		case r < 975:
			t := rng.IntN(tables)
			d := &ds[t]
			span := fmt.Sprintf("tableID: %d, startKey: 7480000000000000ff%02x5f720000000000fa, endKey: 7480000000000000ff%02x5f730000000000fa, keyspaceID: 0", 100+t, t, t)
			if !d.created {
				buf = fmt.Appendf(buf, ` [INFO] [dispatcher_manager.go:661] ["new dispatcher created"] [changefeedID=default/cf-bench] [dispatcherID=%d] [tableSpan="%s"] [startTs=%d] [skipDMLAsStartTs=false]`,
					d.id, span, 463424440748738003+ms)
				d.created = true
			} else if rng.IntN(2) == 0 {
				buf = fmt.Appendf(buf, ` [INFO] [basic_dispatcher.go:540] ["update dispatcher status to working"] [changefeedID=default/cf-bench] [dispatcher=%d] [table="%s"] [checkpointTs=%d] [resolvedTs=%d]`,
					d.id, span, 463424440748738003+ms, 463424440748738003+ms)
			} else {
				buf = fmt.Appendf(buf, ` [INFO] [dispatcher_manager.go:1250] ["event dispatcher completely stopped, and delete it from event dispatcher manager"] [changefeedID=default/cf-bench] [dispatcherID=%d]`, d.id)
				d.created = false
				d.id += tables
			}
		default:
			// operators: started, then finished a few lines later
			if op == 0 {
				op = int64(5000000 + rng.IntN(1<<20))
				buf = fmt.Appendf(buf, ` [INFO] [operator_controller.go:511] ["add operator to running queue"] [role=maintainer] [changefeedID=default/cf-bench] [operator="add dispatcher operator: %d, dest:6a3e0b8e-7c1d-4e8a-9c4e-5b2f0d9a0001"]`, op)
			} else {
				buf = fmt.Appendf(buf, ` [INFO] [operator_controller.go:449] ["operator finished"] [role=maintainer] [changefeedID=default/cf-bench] [operatorID=%d] [operator="add dispatcher operator: %d, dest:6a3e0b8e-7c1d-4e8a-9c4e-5b2f0d9a0001"]`, op, op)
				op = 0
			}
		}
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

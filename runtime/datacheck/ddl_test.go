package datacheck

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/runtime/kafkasink"
)

func ddlRec(p int32, off int64, ts uint64) Record {
	return Record{Partition: p, Offset: off, Value: kafkasink.EncodeDDL(nil, &kafkasink.DDL{Table: "t1", Type: "ALTER", Query: "alter table t1", CommitTs: ts}, 0)}
}

func rowRec(p int32, off int64, r kafkasink.Row) Record {
	return Record{Partition: p, Offset: off, Value: enc(r)}
}

// TestDDLOrdering runs the BlockDDL rule over synthetic two-partition
// topics: a correct order (with a replay after the DDL), a row below the
// DDL planted after it, a row above it planted before it, a partition
// without the DDL, and a DDL not in the history.
func TestDDLOrdering(t *testing.T) {
	below := row("t1", "a", 90, "x")
	above := row("t1", "a", 110, "y")
	other := row("t2", "b", 95, "z") // not blocked
	src := Rows{below, above, other}
	hist := []BlockDDL{{CommitTs: 100, Tables: []string{"t1"}, Query: "alter table t1"}}
	check := func(recs ...Record) Report {
		a, err := NewAnalyzer(src, 200)
		require.NoError(t, err)
		a.SetDDLs(hist, 2)
		for _, r := range recs {
			require.NoError(t, a.Add(r))
		}
		return a.Finish()
	}
	ddlExample := func(rep Report) Example {
		for _, e := range rep.Examples {
			if e.Kind == "ddl_order" || e.Kind == "ddl_missing" || e.Kind == "ddl_unknown" {
				return e
			}
		}
		t.Fatalf("no DDL finding in %v", rep.Examples)
		return Example{}
	}
	kinds := func(rep Report) []string {
		var out []string
		for _, e := range rep.Examples {
			if e.Kind == "ddl_order" || e.Kind == "ddl_missing" || e.Kind == "ddl_unknown" {
				out = append(out, e.Kind)
			}
		}
		return out
	}

	ok := check(rowRec(0, 0, below), ddlRec(0, 1, 100), rowRec(0, 2, below), ddlRec(0, 3, 100), rowRec(0, 4, above),
		ddlRec(1, 0, 100), rowRec(1, 1, other))
	require.Equal(t, 0, ok.DDLOrderViolations, ok.Examples)
	require.Equal(t, 3, ok.DDLs)
	require.True(t, ok.OK())

	late := check(ddlRec(0, 0, 100), rowRec(0, 1, below), rowRec(0, 2, above), ddlRec(1, 0, 100))
	require.Equal(t, 1, late.DDLOrderViolations)
	require.Equal(t, []string{"ddl_order"}, kinds(late))
	require.Contains(t, ddlExample(late).Detail, "below the DDL")
	require.False(t, late.OK())

	early := check(rowRec(0, 0, below), rowRec(0, 1, above), ddlRec(0, 2, 100), ddlRec(1, 0, 100))
	require.Equal(t, 1, early.DDLOrderViolations)
	require.Contains(t, ddlExample(early).Detail, "above the DDL")

	missing := check(rowRec(0, 0, below), ddlRec(0, 1, 100), rowRec(0, 2, above))
	require.Equal(t, []string{"ddl_missing"}, kinds(missing))
	require.Equal(t, int32(1), ddlExample(missing).Partition)

	unknown := check(rowRec(0, 0, below), ddlRec(0, 1, 100), ddlRec(0, 2, 105), rowRec(0, 3, above), ddlRec(1, 0, 100))
	require.Equal(t, []string{"ddl_unknown"}, kinds(unknown))
}

// TestDDLMessageRoundTrip: EncodeDDL's output decodes as a DDL, never as a
// row change.
func TestDDLMessageRoundTrip(t *testing.T) {
	d := kafkasink.DDL{Changefeed: "default/cf", Dispatcher: "d-1", Table: "t\"1", Type: "ALTER", Query: "alter table `t\"1` add column c int", CommitTs: 7 << 18}
	b := kafkasink.EncodeDDL(nil, &d, 5)
	r, got, err := kafkasink.DecodeAny(b)
	require.NoError(t, err)
	require.Nil(t, r)
	d.Schema = kafkasink.DefaultSchema
	require.Equal(t, d, *got)
	_, err = kafkasink.DecodeMessage(b)
	require.ErrorContains(t, err, "DDL")
}

// TestWriteDDLThroughKfake: rows below a DDL, flushed, then the DDL through
// Sink.WriteDDL, then rows above it pass the check with the DDL in each of
// the 3 partitions; a DDL written while rows below it were still unwritten
// (the order a barrier bug would produce) is caught as ddl_order.
func TestWriteDDLThroughKfake(t *testing.T) {
	const ddlTs = 1100
	rows := workload(2000, 100) // commit ts 100..2099
	var below, above []kafkasink.Row
	for _, r := range rows {
		if r.CommitTs < ddlTs {
			below = append(below, r)
		} else {
			above = append(above, r)
		}
	}
	hist := []BlockDDL{{CommitTs: ddlTs, Query: "alter database test charset utf8mb4"}}
	ddl := kafkasink.DDL{Changefeed: "cf", Dispatcher: "d0", Type: "QUERY", Query: hist[0].Query, CommitTs: ddlTs}
	run := func(first, second []kafkasink.Row) Report {
		k := startKfake(t)
		var released atomic.Int64
		s := startSink(t, k, &released, make(chan error, 1))
		require.NoError(t, s.Write(context.Background(), first...))
		waitFor(t, "acks", func() bool { return released.Load() == int64(len(first)) })
		require.NoError(t, s.WriteDDL(context.Background(), ddl))
		require.NoError(t, s.Write(context.Background(), second...))
		waitFor(t, "acks", func() bool { return released.Load() == int64(len(rows)) })
		require.NoError(t, s.Close())
		rep, err := Check(context.Background(), Config{Brokers: k.Addrs(), Topic: s.Topic(), DDLs: hist, Partitions: 3}, Rows(rows), 2099)
		require.NoError(t, err)
		return rep
	}
	ok := run(below, above)
	require.True(t, ok.OK(), "%s %v", ok.String(), ok.Examples)
	require.Equal(t, 3, ok.DDLs)

	// The DDL written after only half the rows below it.
	bad := run(below[:len(below)/2], append(append([]kafkasink.Row{}, below[len(below)/2:]...), above...))
	require.False(t, bad.OK())
	require.Equal(t, len(below)-len(below)/2, bad.DDLOrderViolations, bad.String())
}

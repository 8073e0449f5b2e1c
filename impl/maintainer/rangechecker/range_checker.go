// Package rangechecker is the barrier's coverage check: which of the
// dispatchers a block event waits for have reported it (TiCDC's
// maintainer/range_checker at b813e76f9). A BarrierEvent keeps one
// RangeChecker; every status the barrier takes adds the reporting
// dispatcher's span (AddSubRange), the event is selected once the checker
// IsFullyCovered, and the selection Resets it so that the DONEs are counted
// afresh (maintainer/barrier_event.go:287, 386-422).
//
// Two kinds, chosen per changefeed as HEAD's newRangeCheck does
// (barrier_event.go:150-164): a TableSpanRangeChecker when tables may be
// split (the scheduler's enable-table-across-nodes), which needs the
// reported key ranges to cover each table's whole key range; a
// TableIDRangeChecker otherwise, which counts reporting tables. Neither is
// safe for concurrent use: impl's barrier runs on the maintainer's single
// event loop (HEAD's atomic.Bool flags guard the same single-goroutine use).
package rangechecker

// RangeChecker is range_checker.go's interface.
type RangeChecker interface {
	// AddSubRange records that a dispatcher of table tableID, over the key
	// range [start, end), reported. A nil start and end mark the whole table
	// done (markTableDone: the table has no span left,
	// barrier_event.go:364-366).
	AddSubRange(tableID int64, start, end []byte)
	// IsFullyCovered reports whether every table the checker was built for
	// is covered, or MarkCovered was called since the last Reset.
	IsFullyCovered() bool
	// Reset forgets every reported sub-range and the MarkCovered mark; the
	// tables the checker was built for stay.
	Reset()
	// Detail says what is still missing, for the "barrier event is not
	// resolved" warning (barrier_event.go:676-686).
	Detail() string
	// MarkCovered makes the checker covered until the next Reset (a DB
	// event whose schema has no table left, barrier_event.go:511-515).
	MarkCovered()
}

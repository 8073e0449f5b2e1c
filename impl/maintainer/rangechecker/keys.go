package rangechecker

import (
	"encoding/binary"

	"cdcspec/spec"
)

// TableIDToComparableSpan is the key range of table tableID's records in
// comparable form, as pkg/common/span_op.go:40-53 (TableIDToComparableSpan,
// getTableRange at :97-107) computes it for the classic kernel (impl has one
// keyspace): the memcomparable encoding of
// [t{tableID}_r, t{tableID}_s), where {tableID} is the 8-byte sign-flipped
// big-endian integer of TiDB's tablecodec. Table 0 is the table trigger's
// (common.DDLSpan).
func TableIDToComparableSpan(tableID int64) (start, end []byte) {
	prefix := make([]byte, 0, 11)
	prefix = append(prefix, 't')
	prefix = binary.BigEndian.AppendUint64(prefix, uint64(tableID)^(1<<63))
	prefix = append(prefix, '_')
	return toComparableKey(append(prefix, 'r')), toComparableKey(append(prefix[:len(prefix):len(prefix)], 's'))
}

// SpanKeys is the comparable key range of one of impl's spans. impl keeps a
// span's Start and End relative to its table ("" is the table's start, or its
// end); a relative key k is the table's comparable start key followed by k,
// the keys HEAD's range-checker tests build with appendNew(span.StartKey, k)
// (maintainer/range_checker/table_span_range_checker_test.go:152-155). Every
// such key lies inside the table's range, so spans of one table map to
// sub-ranges of TableIDToComparableSpan in the same order.
func SpanKeys(s spec.Span) (start, end []byte) {
	tStart, tEnd := TableIDToComparableSpan(s.Table)
	start, end = tStart, tEnd
	if s.Start != "" {
		start = append(append([]byte{}, tStart...), s.Start...)
	}
	if s.End != "" {
		end = append(append([]byte{}, tStart...), s.End...)
	}
	return start, end
}

// toComparableKey is TiDB's codec.EncodeBytes (pkg/common/span_op.go:237):
// groups of 8 bytes, the last padded with zeros, each followed by a marker
// byte 0xFF minus the padding, so that bytewise order is kept and no
// encoded key is a prefix of another.
func toComparableKey(key []byte) []byte {
	const group = 8
	out := make([]byte, 0, (len(key)/group+1)*(group+1))
	for i := 0; i <= len(key); i += group {
		n := min(group, len(key)-i)
		out = append(out, key[i:i+n]...)
		pad := group - n
		for range pad {
			out = append(out, 0)
		}
		out = append(out, byte(0xFF-pad))
	}
	return out
}

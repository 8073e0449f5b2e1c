package kafkasink

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Op is the kind of a row change, as in canal-json's "type" field.
type Op uint8

const (
	// OpInsert is the zero value: a row was inserted.
	OpInsert Op = iota
	// OpUpdate: the row's value changed; Row.OldValue holds the previous value.
	OpUpdate
	// OpDelete: the row was deleted; Row.Value holds its last value.
	OpDelete
)

// String returns the canal-json type name (INSERT, UPDATE, DELETE).
func (o Op) String() string {
	switch o {
	case OpInsert:
		return "INSERT"
	case OpUpdate:
		return "UPDATE"
	case OpDelete:
		return "DELETE"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// ParseOp is the inverse of Op.String.
func ParseOp(s string) (Op, error) {
	switch s {
	case "INSERT":
		return OpInsert, nil
	case "UPDATE":
		return OpUpdate, nil
	case "DELETE":
		return OpDelete, nil
	}
	return 0, fmt.Errorf("kafkasink: unknown row change type %q (want INSERT, UPDATE or DELETE)", s)
}

// DefaultSchema is the database name used when Row.Schema is empty (TiDB's
// default database).
const DefaultSchema = "test"

// Column names of the synthetic table every row belongs to: a single
// primary-key column and a single value column (see FORMAT.md).
const (
	PKColumn    = "id"
	ValueColumn = "v"
)

// Row is one row change handed to the sink.
//
// Within one Dispatcher, rows must be written in non-decreasing CommitTs
// order (TiCDC's dispatchers emit events in commit-ts order); Write rejects
// a regression. The identity of a row change is (Schema, Table, Key,
// CommitTs); a table has at most one change per key per commit ts.
type Row struct {
	Changefeed string // must equal the sink's changefeed when set
	Dispatcher string // the ack stream this row belongs to; "" is a valid stream
	Schema     string // database; DefaultSchema when empty
	Table      string // table name, required
	Key        string // primary key value, required
	CommitTs   uint64 // TiDB commit ts (TSO), required (> 0)
	Op         Op
	Value      string // new value (INSERT/UPDATE) or last value (DELETE)
	OldValue   string // previous value, UPDATE only
}

// SchemaOrDefault returns Schema, or DefaultSchema when it is empty.
func (r *Row) SchemaOrDefault() string {
	if r.Schema == "" {
		return DefaultSchema
	}
	return r.Schema
}

// MessageKey is the Kafka message key of a row change: "<schema>.<table>"
// NUL "<pk>". The hash partitioner hashes it, so every change of one key
// lands in one partition (per-key order survives).
func MessageKey(schema, table, key string) []byte {
	b := make([]byte, 0, len(schema)+len(table)+len(key)+2)
	b = append(b, schema...)
	b = append(b, '.')
	b = append(b, table...)
	b = append(b, 0)
	b = append(b, key...)
	return b
}

// Message is the decoded JSON value of a Kafka message: TiCDC's canal-json
// shape with the `_tidb` extension (enable-tidb-extension=true), plus the
// changefeed and dispatcher ids in `_tidb`. FORMAT.md documents every field.
type Message struct {
	ID        int64               `json:"id"`
	Database  string              `json:"database"`
	Table     string              `json:"table"`
	PKNames   []string            `json:"pkNames"`
	IsDDL     bool                `json:"isDdl"`
	Type      string              `json:"type"`
	ES        int64               `json:"es"`
	TS        int64               `json:"ts"`
	SQL       string              `json:"sql"`
	SQLType   map[string]int      `json:"sqlType"`
	MySQLType map[string]string   `json:"mysqlType"`
	Data      []map[string]string `json:"data"`
	Old       []map[string]string `json:"old"`
	TiDB      *TiDBExtension      `json:"_tidb"`
}

// TiDBExtension is the `_tidb` object of a Message.
type TiDBExtension struct {
	CommitTs   uint64 `json:"commitTs"`
	Changefeed string `json:"changefeed,omitempty"`
	Dispatcher string `json:"dispatcher,omitempty"`
}

// Physical returns the physical (wall-clock milliseconds) part of a TiDB
// TSO: ts >> 18.
func Physical(ts uint64) int64 { return int64(ts >> 18) }

// EncodeRow appends the JSON value of r to dst. encodeMillis is the "ts"
// field (wall-clock ms of encoding, as TiCDC writes it). The output is
// exactly what DecodeMessage accepts; see FORMAT.md.
func EncodeRow(dst []byte, r *Row, encodeMillis int64) []byte {
	dst = append(dst, `{"id":0,"database":`...)
	dst = appendJSONString(dst, r.SchemaOrDefault())
	dst = append(dst, `,"table":`...)
	dst = appendJSONString(dst, r.Table)
	dst = append(dst, `,"pkNames":["`+PKColumn+`"],"isDdl":false,"type":"`...)
	dst = append(dst, r.Op.String()...)
	dst = append(dst, `","es":`...)
	dst = strconv.AppendInt(dst, Physical(r.CommitTs), 10)
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, encodeMillis, 10)
	dst = append(dst, `,"sql":"","sqlType":{"`+PKColumn+`":12,"`+ValueColumn+`":2005},"mysqlType":{"`+PKColumn+`":"varchar","`+ValueColumn+`":"text"},"data":[{"`+PKColumn+`":`...)
	dst = appendJSONString(dst, r.Key)
	dst = append(dst, `,"`+ValueColumn+`":`...)
	dst = appendJSONString(dst, r.Value)
	dst = append(dst, `}],"old":`...)
	if r.Op == OpUpdate {
		dst = append(dst, `[{"`+ValueColumn+`":`...)
		dst = appendJSONString(dst, r.OldValue)
		dst = append(dst, `}]`...)
	} else {
		dst = append(dst, `null`...)
	}
	dst = append(dst, `,"_tidb":{"commitTs":`...)
	dst = strconv.AppendUint(dst, r.CommitTs, 10)
	if r.Changefeed != "" {
		dst = append(dst, `,"changefeed":`...)
		dst = appendJSONString(dst, r.Changefeed)
	}
	if r.Dispatcher != "" {
		dst = append(dst, `,"dispatcher":`...)
		dst = appendJSONString(dst, r.Dispatcher)
	}
	dst = append(dst, `}}`...)
	return dst
}

// DecodeMessage parses a message value written by EncodeRow back into a
// Row. It rejects DDL messages, messages without `_tidb.commitTs`, and
// messages that do not carry exactly one data row with the primary-key
// column, naming the offending field.
func DecodeMessage(value []byte) (Row, error) {
	if r, ok := decodeFast(value); ok {
		return r, nil
	}
	return decodeSlow(value)
}

// decodeSlow decodes with encoding/json (any canal-json field order).
func decodeSlow(value []byte) (Row, error) {
	// A lean mirror of Message: only the fields a Row needs, no maps.
	var m struct {
		Database string `json:"database"`
		Table    string `json:"table"`
		IsDDL    bool   `json:"isDdl"`
		Type     string `json:"type"`
		Data     []struct {
			ID *string `json:"id"`
			V  string  `json:"v"`
		} `json:"data"`
		Old []struct {
			V string `json:"v"`
		} `json:"old"`
		TiDB *TiDBExtension `json:"_tidb"`
	}
	if err := json.Unmarshal(value, &m); err != nil {
		return Row{}, fmt.Errorf("kafkasink: message is not canal-json: %w", err)
	}
	if m.IsDDL {
		return Row{}, fmt.Errorf("kafkasink: message is a DDL (isDdl=true), not a row change")
	}
	if m.TiDB == nil || m.TiDB.CommitTs == 0 {
		return Row{}, fmt.Errorf("kafkasink: message has no _tidb.commitTs")
	}
	op, err := ParseOp(m.Type)
	if err != nil {
		return Row{}, err
	}
	if len(m.Data) != 1 {
		return Row{}, fmt.Errorf("kafkasink: message has %d data rows, want 1", len(m.Data))
	}
	if m.Data[0].ID == nil {
		return Row{}, fmt.Errorf("kafkasink: data row has no primary-key column %q", PKColumn)
	}
	r := Row{
		Changefeed: m.TiDB.Changefeed,
		Dispatcher: m.TiDB.Dispatcher,
		Schema:     m.Database,
		Table:      m.Table,
		Key:        *m.Data[0].ID,
		CommitTs:   m.TiDB.CommitTs,
		Op:         op,
		Value:      m.Data[0].V,
	}
	if op == OpUpdate && len(m.Old) == 1 {
		r.OldValue = m.Old[0].V
	}
	return r, nil
}

// decodeFast parses the exact layout EncodeRow writes, without reflection.
// ok=false means "not that layout" (or a string it cannot take verbatim);
// the caller then falls back to decodeSlow, so decodeFast never decides an
// error.
func decodeFast(b []byte) (r Row, ok bool) {
	p := fastParser{b: b}
	if !p.lit(`{"id":0,"database":`) {
		return r, false
	}
	r.Schema, ok = p.str()
	if !ok || !p.lit(`,"table":`) {
		return r, false
	}
	if r.Table, ok = p.str(); !ok || !p.lit(`,"pkNames":["`+PKColumn+`"],"isDdl":false,"type":"`) {
		return r, false
	}
	switch {
	case p.lit(`INSERT"`):
		r.Op = OpInsert
	case p.lit(`UPDATE"`):
		r.Op = OpUpdate
	case p.lit(`DELETE"`):
		r.Op = OpDelete
	default:
		return r, false
	}
	if !p.lit(`,"es":`) || !p.skipInt() || !p.lit(`,"ts":`) || !p.skipInt() ||
		!p.lit(`,"sql":"","sqlType":{"`+PKColumn+`":12,"`+ValueColumn+`":2005},"mysqlType":{"`+PKColumn+`":"varchar","`+ValueColumn+`":"text"},"data":[{"`+PKColumn+`":`) {
		return r, false
	}
	if r.Key, ok = p.str(); !ok || !p.lit(`,"`+ValueColumn+`":`) {
		return r, false
	}
	if r.Value, ok = p.str(); !ok || !p.lit(`}],"old":`) {
		return r, false
	}
	if p.lit(`[{"` + ValueColumn + `":`) {
		old, ok := p.str()
		if !ok || !p.lit(`}]`) {
			return r, false
		}
		if r.Op == OpUpdate {
			r.OldValue = old
		}
	} else if !p.lit(`null`) {
		return r, false
	}
	if !p.lit(`,"_tidb":{"commitTs":`) {
		return r, false
	}
	if r.CommitTs, ok = p.uint(); !ok || r.CommitTs == 0 {
		return r, false
	}
	if p.lit(`,"changefeed":`) {
		if r.Changefeed, ok = p.str(); !ok {
			return r, false
		}
	}
	if p.lit(`,"dispatcher":`) {
		if r.Dispatcher, ok = p.str(); !ok {
			return r, false
		}
	}
	if !p.lit(`}}`) || p.i != len(p.b) {
		return r, false
	}
	return r, true
}

type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// str takes a JSON string without escapes (anything else: not fast).
func (p *fastParser) str() (string, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	for j := p.i + 1; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			s := p.b[p.i+1 : j]
			if !utf8.Valid(s) {
				return "", false
			}
			p.i = j + 1
			return string(s), true
		}
		if c == '\\' || c < 0x20 {
			return "", false
		}
	}
	return "", false
}

func (p *fastParser) skipInt() bool {
	j := p.i
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	start := j
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	if j == start {
		return false
	}
	p.i = j
	return true
}

func (p *fastParser) uint() (uint64, bool) {
	j := p.i
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	if j-p.i > 1 && p.b[p.i] == '0' {
		return 0, false // leading zero: not JSON
	}
	v, err := strconv.ParseUint(string(p.b[p.i:j]), 10, 64)
	if err != nil {
		return 0, false
	}
	p.i = j
	return v, true
}

// appendJSONString appends s as a JSON string literal. Invalid UTF-8 is
// replaced by U+FFFD, as encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// TopicName is the default topic of a changefeed: "cdcspec-<changefeed>"
// with every byte outside Kafka's legal topic alphabet [a-zA-Z0-9._-]
// replaced by '_'.
func TopicName(changefeed string) string {
	var b strings.Builder
	b.WriteString("cdcspec-")
	for i := 0; i < len(changefeed); i++ {
		c := changefeed[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// SyntheticRow is the canonical row change for a synthetic upstream's
// (table id, key, commit ts), as impl/upstream reports it (a DataWritten
// event: Span.Table, Span.Start = key, Checkpoint = commit ts). The writer
// (the sink adapter) and the checker (runtime/datacheck's Source) both
// build rows with it, so their content agrees: schema DefaultSchema, table
// "t<id>", an UPDATE whose value names the change ("<table>/<key>@<ts>").
func SyntheticRow(changefeed, dispatcher string, table int64, key string, commitTs uint64) Row {
	t := "t" + strconv.FormatInt(table, 10)
	return Row{
		Changefeed: changefeed,
		Dispatcher: dispatcher,
		Table:      t,
		Key:        key,
		CommitTs:   commitTs,
		Op:         OpUpdate,
		Value:      t + "/" + key + "@" + strconv.FormatUint(commitTs, 10),
	}
}

// Package logging writes impl's log in TiCDC's unified format
// (github.com/pingcap/log's text encoder) with the time taken from an
// injected clock, so a simulation's log is a pure function of its seed.
//
// Every spec.Event a component emits goes through Logger.Event, which writes
// exactly the canonical line of spec.LogLines() for its kind: the same file
// name, level, message and field keys, so `cdcspec trace` reads impl logs and
// TiCDC logs with one catalogue. Other lines (Logger.Log) use TiCDC's own
// messages from section F of the protocol reference.
package logging

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// Logger is not safe for concurrent use; a simulation has one per run, a
// real runtime one per goroutine-confined component or behind a lock.
type Logger struct {
	enc   zapcore.Encoder
	w     io.Writer
	clock core.Clock
	level zapcore.Level
	// OnEvent, if set, sees every event as it is logged (after Time is set).
	OnEvent func(spec.Event)
	// TSO writes every ts field as a TiDB TSO (spec.TSO), as TiCDC logs
	// it: a uint64 field whose key ends in "Ts" (checkpointTs, startTs,
	// commitTs, resolvedTs, blockTs, flushedTs) holds impl's milliseconds
	// and is shifted when encoded. The real runtime sets it, so its logs
	// read like TiCDC's and `cdcspec trace` shows their physical times;
	// the simulation (virtual milliseconds from 0) leaves it off, so its
	// logs stay a pure function of the seed as they were.
	TSO bool
}

type eventLine struct {
	line   spec.LogLine
	level  zapcore.Level
	fields []fieldMap // in Event struct order, so output is deterministic
	srcNo  int
}

type fieldMap struct {
	event string // Event field name
	key   string // log key
}

var eventLines [64]*eventLine

// Event field names in struct order.
var eventFieldOrder = []string{"Changefeed", "Node", "Origin", "Epoch", "Checkpoint", "NextRetry", "Span", "Tables",
	"Dispatcher", "Op", "State", "Err", "Reason", "BootstrapDone", "Accepted", "RemovalOnly", "Removed", "Merge",
	"SyncPoint", "Influence", "Dropped", "Added"}

// srcLines are TiCDC's line numbers at HEAD (section F) where the reference
// gives them; cdcspec's own lines use 1. Checkers match file + message only.
var srcLines = map[spec.Kind]int{
	spec.StatusIgnored: 618, spec.StateChanged: 697, spec.BackoffErrorSeen: 180, spec.BackoffStarted: 242,
	spec.BackoffIgnored: 174, spec.BootstrapDoneChanged: 191, spec.BackoffRecovered: 157, spec.BackoffGaveUp: 232,
	spec.MaintainerOpStarted: 537, spec.MaintainerOpFinished: 517, spec.ChangefeedCreated: 90,
	spec.ChangefeedRemoved: 134, spec.MaintainerCreated: 277, spec.MaintainerBootstrapped: 1151,
	spec.MaintainerBootstrapFailed: 1036, spec.MaintainerClosed: 588, spec.DispatcherErrorReported: 940,
	spec.MaintainerRejectedAdd: 318, spec.DispatcherCreated: 661, spec.DispatcherWorking: 540,
	spec.DispatcherRemoved: 1250, spec.DispatcherManagerClosed: 1183, spec.DispatcherOpStarted: 511,
	spec.DispatcherOpFinished: 449, spec.SpanNotFound: 233, spec.WorkingTableIgnored: 384, spec.SinkError: 700,
	spec.CaptureSuicide: 152, spec.CoordinatorBootstrapped: 810,
}

func init() {
	for _, ll := range spec.LogLines() {
		el := &eventLine{line: ll, srcNo: 1}
		if n, ok := srcLines[ll.Kind]; ok {
			el.srcNo = n
		}
		switch ll.Level {
		case "DEBUG":
			el.level = zapcore.DebugLevel
		case "WARN":
			el.level = zapcore.WarnLevel
		case "ERROR":
			el.level = zapcore.ErrorLevel
		default:
			el.level = zapcore.InfoLevel
		}
		for _, f := range eventFieldOrder {
			if k, ok := ll.Fields[f]; ok {
				el.fields = append(el.fields, fieldMap{event: f, key: k})
			}
		}
		if int(ll.Kind) < len(eventLines) {
			eventLines[ll.Kind] = el
		}
	}
}

// New returns a logger writing to w (nil: encode nothing, events only) at
// the given level ("debug", "info", "warn", "error").
func New(w io.Writer, clock core.Clock, level string) *Logger {
	enc, err := log.NewTextEncoder(&log.Config{Format: "text", DisableErrorVerbose: true})
	if err != nil {
		// The text format is built in; NewTextEncoder fails only on unknown formats.
		panic(err)
	}
	var lv zapcore.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = zapcore.InfoLevel
	}
	return &Logger{enc: enc, w: w, clock: clock, level: lv}
}

// Enabled reports whether lines at lv are written.
func (l *Logger) Enabled(lv zapcore.Level) bool { return l.w != nil && lv >= l.level }

// Log writes one non-event line with TiCDC's file name and message.
func (l *Logger) Log(lv zapcore.Level, file string, line int, msg string, fields ...zap.Field) {
	if !l.Enabled(lv) {
		return
	}
	l.write(lv, file, line, msg, fields)
}

// Info, Warn and Error are shorthands for Log.
func (l *Logger) Info(file string, line int, msg string, fields ...zap.Field) {
	l.Log(zapcore.InfoLevel, file, line, msg, fields...)
}
func (l *Logger) Warn(file string, line int, msg string, fields ...zap.Field) {
	l.Log(zapcore.WarnLevel, file, line, msg, fields...)
}
func (l *Logger) Error(file string, line int, msg string, fields ...zap.Field) {
	l.Log(zapcore.ErrorLevel, file, line, msg, fields...)
}
func (l *Logger) Debug(file string, line int, msg string, fields ...zap.Field) {
	l.Log(zapcore.DebugLevel, file, line, msg, fields...)
}

func (l *Logger) write(lv zapcore.Level, file string, line int, msg string, fields []zap.Field) {
	if l.TSO {
		fields = tsoFields(fields)
	}
	ent := zapcore.Entry{
		Level:   lv,
		Time:    time.UnixMilli(l.clock.NowMs()).UTC(),
		Message: msg,
		Caller:  zapcore.EntryCaller{Defined: true, File: file, Line: line},
	}
	buf, err := l.enc.EncodeEntry(ent, fields)
	if err != nil {
		return
	}
	_, _ = l.w.Write(buf.Bytes())
	buf.Free()
}

// Event records e: it sets e.Time from the clock when zero, writes the
// canonical log line of e.Kind (prefixed by extra fields, e.g. role), and
// appends e to out.Events. A kind without a canonical line is only appended.
func (l *Logger) Event(out *core.Effects, e spec.Event, extra ...zap.Field) {
	if e.Time == 0 {
		e.Time = l.clock.NowMs()
	}
	if out != nil {
		out.Events = append(out.Events, e)
	}
	if l.OnEvent != nil {
		l.OnEvent(e)
	}
	var el *eventLine
	if int(e.Kind) < len(eventLines) {
		el = eventLines[e.Kind]
	}
	if el == nil || !l.Enabled(el.level) {
		return
	}
	fields := make([]zap.Field, 0, len(extra)+len(el.fields))
	fields = append(fields, extra...)
	for _, f := range el.fields {
		fields = append(fields, eventField(e, f))
	}
	l.write(el.level, el.line.File, el.srcNo, el.line.Message, fields)
}

func eventField(e spec.Event, f fieldMap) zap.Field {
	switch f.event {
	case "Changefeed":
		return zap.String(f.key, e.Changefeed)
	case "Node":
		return zap.String(f.key, e.Node)
	case "Origin":
		return zap.String(f.key, e.Origin)
	case "Epoch":
		return zap.Uint64(f.key, e.Epoch)
	case "Checkpoint":
		return zap.Uint64(f.key, e.Checkpoint)
	case "NextRetry":
		return zap.Time(f.key, time.UnixMilli(e.NextRetry).UTC())
	case "Span":
		if f.key == "tableID" {
			return zap.Int64(f.key, e.Span.Table)
		}
		return zap.String(f.key, spec.SpanText(e.Span))
	case "Tables":
		return zap.Int64s(f.key, e.Tables)
	case "Dispatcher":
		return zap.String(f.key, e.Dispatcher)
	case "Op":
		return zap.String(f.key, string(e.Op))
	case "State":
		return zap.String(f.key, e.State)
	case "Err":
		return zap.String(f.key, e.Err)
	case "Reason":
		return zap.String(f.key, e.Reason)
	case "BootstrapDone":
		return zap.Bool(f.key, e.BootstrapDone)
	case "Accepted":
		return zap.Bool(f.key, e.Accepted)
	case "RemovalOnly":
		return zap.Bool(f.key, e.RemovalOnly)
	case "Removed":
		return zap.Bool(f.key, e.Removed)
	case "Merge":
		return zap.Bool(f.key, e.Merge)
	case "SyncPoint":
		return zap.Bool(f.key, e.SyncPoint)
	case "Influence":
		return zap.String(f.key, spec.InfluenceText(e.Influence))
	case "Dropped":
		return zap.Int64s(f.key, e.Dropped)
	case "Added":
		return zap.Int64s(f.key, e.Added)
	}
	return zap.Skip()
}

// tsoFields returns fields with every ts field (a uint64 whose key ends
// in "Ts") written as a TSO; fields is not modified.
func tsoFields(fields []zap.Field) []zap.Field {
	var out []zap.Field
	for i, f := range fields {
		if f.Type != zapcore.Uint64Type || !strings.HasSuffix(f.Key, "Ts") {
			continue
		}
		if out == nil {
			out = append([]zap.Field(nil), fields...)
		}
		out[i].Integer = int64(spec.TSO(uint64(f.Integer)))
	}
	if out == nil {
		return fields
	}
	return out
}

// Role is the role field of operator lines.
func Role(r string) zap.Field { return zap.String("role", r) }

// CF is the changefeedID field.
func CF(id core.ChangefeedID) zap.Field { return zap.String("changefeedID", string(id)) }

// Ts formats a ts field.
func Ts(key string, ts uint64) zap.Field { return zap.Uint64(key, ts) }

// Itoa is strconv.Itoa, re-exported for field values.
func Itoa(i int) string { return strconv.Itoa(i) }

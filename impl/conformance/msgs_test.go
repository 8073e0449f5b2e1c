package conformance

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// The scenarios write messages in one text form, which is also how the
// harness prints the messages a component sends, so an output line can be
// pasted into a later input. A message is a header line
//
//	TypeName key=value flag ...
//
// followed by indented item lines (statuses, spans, journaled operators,
// block statuses, ACKs):
//
//	CoordinatorBootstrapResponse
//	  status cf=cf1 state=Working checkpoint=100 epoch=5 bootstrapped
//	MaintainerHeartbeat
//	  status cf=cf1 state=Stopped epoch=5 err=CDC:ErrKafkaAsyncSendMessage:"kafka failed"
//	AddMaintainerRequest cf=cf1 checkpoint=100 new epoch=5
//	RemoveMaintainerRequest cf=cf1 cascade removed epoch=5
//	MaintainerBootstrapRequest cf=cf1 start=100 trigger=d1 new epoch=5
//	MaintainerBootstrapResponse cf=cf1 checkpoint=100 epoch=5
//	  span id=s1 span=t1 state=Working checkpoint=100
//	  op-create id=d3 cf=cf1 span=t2 start=100 type=O_Add epoch=5 seq=1
//	MaintainerCloseRequest cf=cf1 removed epoch=5
//	MaintainerCloseResponse cf=cf1 success epoch=5
//	ScheduleDispatcherRequest Create id=d3 cf=cf1 span=t2 start=100 type=O_Add epoch=5 seq=1
//	HeartBeatRequest cf=cf1 watermark=100/120/3 complete
//	  status id=d3 state=Working checkpoint=100
//	BlockStatusRequest cf=cf1
//	  block id=d1 ts=200 stage=None add=5
//	  block id=d1 ts=300 stage=Waiting influence=db schema=1 drop=1,2 [drop-schema=1] [rename=1:1:2]
//	HeartBeatResponse cf=cf1 epoch=5
//	  ack id=d1 ts=200
//
// Changefeed names are printed without the "default/" keyspace; dispatcher
// IDs go through the harness's aliases (d1, d2, ... for generated IDs).
// A flag is a bare word: present means true.

// fields is one parsed line: a leading word and key=value / flag tokens.
type fields struct {
	word string
	kv   map[string]string
	used map[string]bool
}

func tokenize(line string) ([]string, error) {
	var toks []string
	i := 0
	for i < len(line) {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i >= len(line) {
			break
		}
		j := i
		for j < len(line) && line[j] != ' ' {
			if line[j] == '"' {
				k := j + 1
				for k < len(line) && line[k] != '"' {
					if line[k] == '\\' {
						k++
					}
					k++
				}
				if k >= len(line) {
					return nil, fmt.Errorf("unterminated quote in %q", line)
				}
				j = k
			}
			j++
		}
		toks = append(toks, line[i:j])
		i = j
	}
	return toks, nil
}

func parseFields(line string) (*fields, error) {
	toks, err := tokenize(strings.TrimSpace(line))
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty line")
	}
	f := &fields{word: toks[0], kv: map[string]string{}, used: map[string]bool{}}
	for _, t := range toks[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			f.kv[t] = "true"
			continue
		}
		if strings.HasPrefix(v, "\"") {
			u, err := strconv.Unquote(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", t, err)
			}
			v = u
		}
		f.kv[k] = v
	}
	return f, nil
}

func (f *fields) str(k string) string { f.used[k] = true; return f.kv[k] }
func (f *fields) has(k string) bool   { f.used[k] = true; _, ok := f.kv[k]; return ok }
func (f *fields) flag(k string) bool  { f.used[k] = true; return f.kv[k] == "true" }

func (f *fields) u64(k string) (uint64, error) {
	f.used[k] = true
	v, ok := f.kv[k]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %v", k, v, err)
	}
	return n, nil
}

// unused reports keys nobody read: a typo in a scenario is an error.
func (f *fields) unused() error {
	var bad []string
	for k := range f.kv {
		if !f.used[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%s: unknown field(s) %s", f.word, strings.Join(bad, ","))
}

func cfID(name string) core.ChangefeedID {
	if strings.Contains(name, "/") {
		return core.ChangefeedID(name)
	}
	return core.ChangefeedID("default/" + name)
}

func cfName(id core.ChangefeedID) string { return strings.TrimPrefix(string(id), "default/") }

func parseSpan(s string) (spec.Span, error) {
	if !strings.HasPrefix(s, "t") {
		return spec.Span{}, fmt.Errorf("span %q: want tN or tN[start,end)", s)
	}
	rest := s[1:]
	tbl, keys, hasKeys := strings.Cut(rest, "[")
	t, err := strconv.ParseInt(tbl, 10, 64)
	if err != nil {
		return spec.Span{}, fmt.Errorf("span %q: %v", s, err)
	}
	sp := spec.Span{Table: t}
	if hasKeys {
		keys = strings.TrimSuffix(keys, ")")
		a, b, ok := strings.Cut(keys, ",")
		if !ok {
			return spec.Span{}, fmt.Errorf("span %q: want [start,end)", s)
		}
		if b == "+inf" {
			b = ""
		}
		sp.Start, sp.End = a, b
	}
	return sp, nil
}

func parseState(s string) (core.ComponentState, error) {
	for st := core.ComponentWorking; st <= core.ComponentRemoving; st++ {
		if st.String() == s {
			return st, nil
		}
	}
	return 0, fmt.Errorf("unknown component state %q", s)
}

func parseOpType(s string) (core.OperatorType, error) {
	for t := core.OpTypeAdd; t <= core.OpTypeSplit; t++ {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown operator type %q", s)
}

func parseAction(s string) (core.ScheduleAction, error) {
	switch s {
	case "Create":
		return core.ScheduleCreate, nil
	case "Remove":
		return core.ScheduleRemove, nil
	}
	return 0, fmt.Errorf("unknown schedule action %q", s)
}

var stageNames = map[core.BlockStage]string{core.StageNone: "None", core.StageWaiting: "Waiting", core.StageWriting: "Writing", core.StageDone: "Done"}

// parseRunningError reads err=CODE:message (the message may be quoted).
func parseRunningError(v string, node core.NodeID) *core.RunningError {
	e := parseRunningErrorParts(v, node)
	if u, err := strconv.Unquote(e.Message); err == nil {
		e.Message = u
	}
	return e
}

func parseRunningErrorParts(v string, node core.NodeID) *core.RunningError {
	code, msg, ok := strings.Cut(v, ":")
	if !ok || !strings.HasPrefix(code, "CDC") {
		return &core.RunningError{Node: node, Message: v}
	}
	if !strings.HasPrefix(msg, "Err") {
		return &core.RunningError{Node: node, Code: code, Message: msg}
	}
	// CDC:ErrX:message
	sub, m, ok2 := strings.Cut(msg, ":")
	if !ok2 {
		return &core.RunningError{Node: node, Code: code + ":" + msg, Message: msg}
	}
	return &core.RunningError{Node: node, Code: code + ":" + sub, Message: m}
}

func fmtRunningError(e *core.RunningError) string {
	s := e.Message
	if e.Code != "" {
		s = e.Code + ":" + e.Message
	}
	return quoteIf(s)
}

func quoteIf(s string) string {
	if strings.ContainsAny(s, " \t\"=") || s == "" {
		return strconv.Quote(s)
	}
	return s
}

// msgCodec parses and prints messages, resolving dispatcher aliases.
type msgCodec struct {
	ids *idAliases
}

// parseMessage reads one message: header plus item lines.
func (c msgCodec) parseMessage(from core.NodeID, header string, items []string) (core.Message, error) {
	h, err := parseFields(header)
	if err != nil {
		return nil, err
	}
	var parsedItems []*fields
	for _, it := range items {
		f, err := parseFields(it)
		if err != nil {
			return nil, err
		}
		parsedItems = append(parsedItems, f)
	}
	msg, err := c.build(from, h, parsedItems)
	if err != nil {
		return nil, err
	}
	if err := h.unused(); err != nil {
		return nil, err
	}
	for _, f := range parsedItems {
		if err := f.unused(); err != nil {
			return nil, err
		}
	}
	return msg, nil
}

func (c msgCodec) status(from core.NodeID, f *fields) (core.MaintainerStatus, error) {
	s := core.MaintainerStatus{Changefeed: cfID(f.str("cf")), BootstrapDone: f.flag("bootstrapped"), CascadeClosed: f.flag("cascade-closed")}
	st := "Working"
	if f.has("state") {
		st = f.str("state")
	}
	var err error
	if s.State, err = parseState(st); err != nil {
		return s, err
	}
	if s.CheckpointTs, err = f.u64("checkpoint"); err != nil {
		return s, err
	}
	if s.Epoch, err = f.u64("epoch"); err != nil {
		return s, err
	}
	if f.has("err") {
		s.Err = append(s.Err, *parseRunningError(f.str("err"), from))
	}
	if f.has("err2") {
		s.Err = append(s.Err, *parseRunningError(f.str("err2"), from))
	}
	return s, nil
}

func (c msgCodec) schedule(f *fields, action string) (core.ScheduleDispatcherRequest, error) {
	r := core.ScheduleDispatcherRequest{Changefeed: cfID(f.str("cf"))}
	var err error
	if r.Action, err = parseAction(action); err != nil {
		return r, err
	}
	if r.Config.ID, err = c.ids.resolve(f.str("id")); err != nil {
		return r, err
	}
	if f.has("span") {
		if r.Config.Span, err = parseSpan(f.str("span")); err != nil {
			return r, err
		}
	}
	if r.Config.StartTs, err = f.u64("start"); err != nil {
		return r, err
	}
	r.Config.SkipDMLAsStartTs = f.flag("skip-dml")
	if f.has("type") {
		if r.OpType, err = parseOpType(f.str("type")); err != nil {
			return r, err
		}
	}
	if r.Epoch, err = f.u64("epoch"); err != nil {
		return r, err
	}
	if r.OpSeq, err = f.u64("seq"); err != nil {
		return r, err
	}
	return r, nil
}

// merge parses a MergeDispatcherRequest's fields: cf, merged (the merged
// dispatcher's ID), sources (the source dispatchers' IDs, comma-separated)
// and epoch.
func (c msgCodec) merge(f *fields) (core.MergeDispatcherRequest, error) {
	m := core.MergeDispatcherRequest{Changefeed: cfID(f.str("cf"))}
	var err error
	if f.has("merged") {
		if m.MergedID, err = c.ids.resolve(f.str("merged")); err != nil {
			return m, err
		}
	}
	if f.has("sources") {
		for _, a := range strings.Split(f.str("sources"), ",") {
			id, err := c.ids.resolve(a)
			if err != nil {
				return m, err
			}
			m.DispatcherIDs = append(m.DispatcherIDs, id)
		}
	}
	m.Epoch, err = f.u64("epoch")
	return m, err
}

// fmtMerge renders a MergeDispatcherRequest as merge parses it.
func (c msgCodec) fmtMerge(word string, m *core.MergeDispatcherRequest) string {
	var srcs []string
	for _, id := range m.DispatcherIDs {
		srcs = append(srcs, c.ids.alias(id))
	}
	return newLine(word).kv("cf", cfName(m.Changefeed)).kv("merged", c.ids.alias(m.MergedID)).kv("sources", strings.Join(srcs, ",")).u("epoch", m.Epoch).String()
}

func (c msgCodec) build(from core.NodeID, h *fields, items []*fields) (core.Message, error) {
	var err error
	need := func(word string, f *fields) error {
		if f.word != word {
			return fmt.Errorf("%s: item %q, want %q", h.word, f.word, word)
		}
		return nil
	}
	switch h.word {
	case "CoordinatorBootstrapRequest":
		v, err := h.u64("version")
		return &core.CoordinatorBootstrapRequest{Version: int64(v)}, err
	case "CoordinatorBootstrapResponse", "MaintainerHeartbeat":
		var sts []core.MaintainerStatus
		for _, it := range items {
			if err := need("status", it); err != nil {
				return nil, err
			}
			s, err := c.status(from, it)
			if err != nil {
				return nil, err
			}
			sts = append(sts, s)
		}
		if h.word == "MaintainerHeartbeat" {
			return &core.MaintainerHeartbeat{Statuses: sts}, nil
		}
		return &core.CoordinatorBootstrapResponse{Statuses: sts}, nil
	case "AddMaintainerRequest":
		m := &core.AddMaintainerRequest{Changefeed: cfID(h.str("cf")), IsNew: h.flag("new")}
		if m.CheckpointTs, err = h.u64("checkpoint"); err != nil {
			return nil, err
		}
		m.Epoch, err = h.u64("epoch")
		return m, err
	case "RemoveMaintainerRequest":
		m := &core.RemoveMaintainerRequest{Changefeed: cfID(h.str("cf")), Cascade: h.flag("cascade"), Removed: h.flag("removed")}
		m.Epoch, err = h.u64("epoch")
		return m, err
	case "MaintainerBootstrapRequest":
		m := &core.MaintainerBootstrapRequest{Changefeed: cfID(h.str("cf")), IsNew: h.flag("new")}
		if h.has("trigger") {
			if m.TriggerID, err = c.ids.resolve(h.str("trigger")); err != nil {
				return nil, err
			}
		}
		if m.StartTs, err = h.u64("start"); err != nil {
			return nil, err
		}
		m.Epoch, err = h.u64("epoch")
		return m, err
	case "MaintainerBootstrapResponse":
		m := &core.MaintainerBootstrapResponse{Changefeed: cfID(h.str("cf"))}
		if m.CheckpointTs, err = h.u64("checkpoint"); err != nil {
			return nil, err
		}
		if m.Epoch, err = h.u64("epoch"); err != nil {
			return nil, err
		}
		if h.has("err") {
			m.Err = parseRunningError(h.str("err"), from)
		}
		for _, it := range items {
			switch it.word {
			case "span":
				var sp core.BootstrapTableSpan
				if sp.ID, err = c.ids.resolve(it.str("id")); err != nil {
					return nil, err
				}
				if sp.Span, err = parseSpan(it.str("span")); err != nil {
					return nil, err
				}
				st := "Working"
				if it.has("state") {
					st = it.str("state")
				}
				if sp.State, err = parseState(st); err != nil {
					return nil, err
				}
				if sp.CheckpointTs, err = it.u64("checkpoint"); err != nil {
					return nil, err
				}
				if it.has("block-ts") {
					if sp.BlockState, err = parseBootstrapBlockState(it, sp.ID); err != nil {
						return nil, err
					}
				}
				m.Spans = append(m.Spans, sp)
			case "op-merge":
				r, err := c.merge(it)
				if err != nil {
					return nil, err
				}
				m.MergeOperators = append(m.MergeOperators, r)
			case "op-create", "op-remove":
				r, err := c.schedule(it, map[string]string{"op-create": "Create", "op-remove": "Remove"}[it.word])
				if err != nil {
					return nil, err
				}
				m.Operators = append(m.Operators, r)
			default:
				return nil, fmt.Errorf("MaintainerBootstrapResponse: unknown item %q", it.word)
			}
		}
		return m, nil
	case "MaintainerCloseRequest":
		m := &core.MaintainerCloseRequest{Changefeed: cfID(h.str("cf")), Removed: h.flag("removed")}
		m.Epoch, err = h.u64("epoch")
		return m, err
	case "MaintainerCloseResponse":
		m := &core.MaintainerCloseResponse{Changefeed: cfID(h.str("cf")), Success: h.flag("success")}
		m.Epoch, err = h.u64("epoch")
		return m, err
	case "MergeDispatcherRequest":
		m, err := c.merge(h)
		return &m, err
	case "ScheduleDispatcherRequest":
		action := ""
		for _, a := range []string{"Create", "Remove"} {
			if h.has(a) && h.kv[a] == "true" {
				action = a
			}
		}
		r, err := c.schedule(h, action)
		return &r, err
	case "HeartBeatRequest":
		m := &core.HeartBeatRequest{Changefeed: cfID(h.str("cf")), Complete: h.flag("complete")}
		if h.has("watermark") {
			parts := strings.Split(h.str("watermark"), "/")
			if len(parts) != 3 {
				return nil, fmt.Errorf("watermark=%q: want checkpoint/resolved/seq", h.kv["watermark"])
			}
			var w core.Watermark
			for i, p := range parts {
				if p == "max" {
					p = strconv.FormatUint(^uint64(0), 10)
				}
				n, err := strconv.ParseUint(p, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("watermark=%q: %v", h.kv["watermark"], err)
				}
				*[]*uint64{&w.CheckpointTs, &w.ResolvedTs, &w.Seq}[i] = n
			}
			m.Watermark = &w
		}
		if h.has("err") {
			m.Err = parseRunningError(h.str("err"), from)
		}
		for _, it := range items {
			if err := need("status", it); err != nil {
				return nil, err
			}
			var st core.TableSpanStatus
			if st.ID, err = c.ids.resolve(it.str("id")); err != nil {
				return nil, err
			}
			if st.State, err = parseState(it.str("state")); err != nil {
				return nil, err
			}
			if st.CheckpointTs, err = it.u64("checkpoint"); err != nil {
				return nil, err
			}
			m.Statuses = append(m.Statuses, st)
		}
		return m, nil
	case "BlockStatusRequest":
		m := &core.BlockStatusRequest{Changefeed: cfID(h.str("cf"))}
		for _, it := range items {
			if err := need("block", it); err != nil {
				return nil, err
			}
			var bs core.BlockStatus
			if bs.ID, err = c.ids.resolve(it.str("id")); err != nil {
				return nil, err
			}
			if bs.BlockTs, err = it.u64("ts"); err != nil {
				return nil, err
			}
			bs.Stage = core.StageNone
			if it.has("stage") {
				found := false
				for k, v := range stageNames {
					if v == it.kv["stage"] {
						bs.Stage, found = k, true
					}
				}
				if !found {
					return nil, fmt.Errorf("unknown stage %q", it.kv["stage"])
				}
			}
			tables := func(key string) ([]int64, error) {
				var out []int64
				for _, t := range strings.Split(it.str(key), ",") {
					n, err := strconv.ParseInt(t, 10, 64)
					if err != nil {
						return nil, fmt.Errorf("%s=%q: %v", key, it.str(key), err)
					}
					out = append(out, n)
				}
				return out, nil
			}
			if it.has("add") {
				if bs.NeedAdded, err = tables("add"); err != nil {
					return nil, err
				}
			}
			// A blocking DDL (WAITING/DONE): the tables it blocks, the ones
			// it drops, its influence (normal by default).
			if it.has("tables") {
				if bs.BlockTables, err = tables("tables"); err != nil {
					return nil, err
				}
				bs.Influence = spec.InfluenceNormal
			}
			if it.has("drop") {
				if bs.NeedDropped, err = tables("drop"); err != nil {
					return nil, err
				}
			}
			if it.has("influence") {
				switch v := it.str("influence"); v {
				case spec.InfluenceNormal, spec.InfluenceDB, spec.InfluenceAll:
					bs.Influence = v
				default:
					return nil, fmt.Errorf("influence=%q: want %s, %s or %s", v, spec.InfluenceNormal, spec.InfluenceDB, spec.InfluenceAll)
				}
			}
			// Schema IDs: the schema a DB event blocks (schema=S), the
			// schema a DROP DATABASE drops (drop-schema=S), the tables a
			// RENAME moves (rename=TABLE:OLD:NEW,...).
			for key, dst := range map[string]*int64{"schema": &bs.SchemaID, "drop-schema": &bs.DropSchemaID} {
				if it.has(key) {
					if *dst, err = strconv.ParseInt(it.str(key), 10, 64); err != nil {
						return nil, fmt.Errorf("%s=%q: %v", key, it.str(key), err)
					}
				}
			}
			if it.has("rename") {
				for _, r := range strings.Split(it.str("rename"), ",") {
					p := strings.Split(r, ":")
					var v [3]int64
					for i := 0; i < len(p) && i < 3; i++ {
						v[i], err = strconv.ParseInt(p[i], 10, 64)
						if err != nil {
							break
						}
					}
					if len(p) != 3 || err != nil {
						return nil, fmt.Errorf("rename=%q: want TABLE:OLDSCHEMA:NEWSCHEMA,...", it.str("rename"))
					}
					bs.UpdatedSchemas = append(bs.UpdatedSchemas, core.SchemaIDChange{TableID: v[0], OldSchemaID: v[1], NewSchemaID: v[2]})
				}
			}
			bs.IsSyncPoint = it.has("syncpoint")
			m.Statuses = append(m.Statuses, bs)
		}
		return m, nil
	case "HeartBeatResponse":
		m := &core.HeartBeatResponse{Changefeed: cfID(h.str("cf"))}
		if m.Epoch, err = h.u64("epoch"); err != nil {
			return nil, err
		}
		for _, it := range items {
			if err := need("ack", it); err != nil {
				return nil, err
			}
			var a core.BlockStatus
			if a.ID, err = c.ids.resolve(it.str("id")); err != nil {
				return nil, err
			}
			if a.BlockTs, err = it.u64("ts"); err != nil {
				return nil, err
			}
			a.Stage = core.StageNone
			a.IsSyncPoint = it.flag("syncpoint")
			m.ACKs = append(m.ACKs, a)
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown message type %q", h.word)
}

// line builds "word k=v ..." skipping zero values.
type line struct{ b strings.Builder }

func newLine(word string) *line { l := &line{}; l.b.WriteString(word); return l }

func (l *line) kv(k, v string) *line {
	l.b.WriteString(" " + k + "=" + v)
	return l
}

func (l *line) u(k string, v uint64) *line { return l.kv(k, strconv.FormatUint(v, 10)) }

func (l *line) flag(k string, on bool) *line {
	if on {
		l.b.WriteString(" " + k)
	}
	return l
}

func (l *line) String() string { return l.b.String() }

// format prints a message as the header line and indented item lines.
func (c msgCodec) format(msg core.Message) []string {
	fmtStatus := func(s core.MaintainerStatus) string {
		l := newLine("status").kv("cf", cfName(s.Changefeed)).kv("state", s.State.String()).u("checkpoint", s.CheckpointTs).u("epoch", s.Epoch).
			flag("bootstrapped", s.BootstrapDone).flag("cascade-closed", s.CascadeClosed)
		for i := range s.Err {
			k := "err"
			if i > 0 {
				k = "err" + strconv.Itoa(i+1)
			}
			l.kv(k, fmtRunningError(&s.Err[i]))
		}
		return "  " + l.String()
	}
	sched := func(word string, r *core.ScheduleDispatcherRequest) string {
		l := newLine(word)
		if word == "ScheduleDispatcherRequest" {
			l.flag(r.Action.String(), true)
		}
		l.kv("id", c.ids.alias(r.Config.ID)).kv("cf", cfName(r.Changefeed))
		if r.Config.Span != (spec.Span{}) {
			l.kv("span", r.Config.Span.String())
		}
		if r.Config.StartTs != 0 {
			l.u("start", r.Config.StartTs)
		}
		l.flag("skip-dml", r.Config.SkipDMLAsStartTs)
		if r.OpType != 0 {
			l.kv("type", r.OpType.String())
		}
		l.u("epoch", r.Epoch)
		if r.OpSeq != 0 {
			l.u("seq", r.OpSeq)
		}
		return l.String()
	}
	switch m := msg.(type) {
	case *core.CoordinatorBootstrapRequest:
		return []string{newLine(m.TypeName()).kv("version", strconv.FormatInt(m.Version, 10)).String()}
	case *core.CoordinatorBootstrapResponse:
		out := []string{m.TypeName()}
		for _, s := range m.Statuses {
			out = append(out, fmtStatus(s))
		}
		return out
	case *core.MaintainerHeartbeat:
		out := []string{m.TypeName()}
		for _, s := range m.Statuses {
			out = append(out, fmtStatus(s))
		}
		return out
	case *core.AddMaintainerRequest:
		return []string{newLine(m.TypeName()).kv("cf", cfName(m.Changefeed)).u("checkpoint", m.CheckpointTs).flag("new", m.IsNew).u("epoch", m.Epoch).String()}
	case *core.RemoveMaintainerRequest:
		return []string{newLine(m.TypeName()).kv("cf", cfName(m.Changefeed)).flag("cascade", m.Cascade).flag("removed", m.Removed).u("epoch", m.Epoch).String()}
	case *core.MaintainerBootstrapRequest:
		l := newLine(m.TypeName()).kv("cf", cfName(m.Changefeed)).u("start", m.StartTs)
		if m.TriggerID != "" {
			l.kv("trigger", c.ids.alias(m.TriggerID))
		}
		return []string{l.flag("new", m.IsNew).u("epoch", m.Epoch).String()}
	case *core.MaintainerBootstrapResponse:
		l := newLine(m.TypeName()).kv("cf", cfName(m.Changefeed)).u("checkpoint", m.CheckpointTs).u("epoch", m.Epoch)
		if m.Err != nil {
			l.kv("err", fmtRunningError(m.Err))
		}
		out := []string{l.String()}
		for _, s := range m.Spans {
			l := newLine("span").kv("id", c.ids.alias(s.ID)).kv("span", s.Span.String()).kv("state", s.State.String()).u("checkpoint", s.CheckpointTs)
			if b := s.BlockState; b != nil {
				l.u("block-ts", b.BlockTs).kv("block-stage", stageNames[b.Stage])
				if len(b.BlockTables) > 0 {
					var ts []string
					for _, t := range b.BlockTables {
						ts = append(ts, strconv.FormatInt(t, 10))
					}
					l.kv("block-tables", strings.Join(ts, ","))
				}
				if b.Influence != "" && b.Influence != spec.InfluenceNormal {
					l.kv("block-influence", b.Influence)
				}
				l.flag("block-syncpoint", b.IsSyncPoint)
			}
			out = append(out, "  "+l.String())
		}
		for i := range m.Operators {
			word := "op-create"
			if m.Operators[i].Action == core.ScheduleRemove {
				word = "op-remove"
			}
			out = append(out, "  "+sched(word, &m.Operators[i]))
		}
		for i := range m.MergeOperators {
			out = append(out, "  "+c.fmtMerge("op-merge", &m.MergeOperators[i]))
		}
		return out
	case *core.MaintainerCloseRequest:
		return []string{newLine(m.TypeName()).kv("cf", cfName(m.Changefeed)).flag("removed", m.Removed).u("epoch", m.Epoch).String()}
	case *core.MaintainerCloseResponse:
		return []string{newLine(m.TypeName()).kv("cf", cfName(m.Changefeed)).flag("success", m.Success).u("epoch", m.Epoch).String()}
	case *core.ScheduleDispatcherRequest:
		return []string{sched(m.TypeName(), m)}
	case *core.MergeDispatcherRequest:
		return []string{c.fmtMerge(m.TypeName(), m)}
	case *core.HeartBeatRequest:
		l := newLine(m.TypeName()).kv("cf", cfName(m.Changefeed))
		if m.Watermark != nil {
			l.kv("watermark", fmt.Sprintf("%s/%s/%d", tsText(m.Watermark.CheckpointTs), tsText(m.Watermark.ResolvedTs), m.Watermark.Seq))
		}
		l.flag("complete", m.Complete)
		if m.Err != nil {
			l.kv("err", fmtRunningError(m.Err))
		}
		out := []string{l.String()}
		for _, s := range m.Statuses {
			out = append(out, "  "+newLine("status").kv("id", c.ids.alias(s.ID)).kv("state", s.State.String()).u("checkpoint", s.CheckpointTs).String())
		}
		return out
	case *core.BlockStatusRequest:
		out := []string{newLine(m.TypeName()).kv("cf", cfName(m.Changefeed)).String()}
		for _, s := range m.Statuses {
			l := newLine("block").kv("id", c.ids.alias(s.ID)).u("ts", s.BlockTs).kv("stage", stageNames[s.Stage]).flag("syncpoint", s.IsSyncPoint)
			if len(s.NeedAdded) > 0 {
				var ts []string
				for _, t := range s.NeedAdded {
					ts = append(ts, strconv.FormatInt(t, 10))
				}
				l.kv("add", strings.Join(ts, ","))
			}
			out = append(out, "  "+l.String())
		}
		return out
	case *core.HeartBeatResponse:
		out := []string{newLine(m.TypeName()).kv("cf", cfName(m.Changefeed)).u("epoch", m.Epoch).String()}
		for _, a := range m.Ignored {
			out = append(out, "  "+newLine("ignored").kv("id", c.ids.alias(a.ID)).u("ts", a.BlockTs).flag("syncpoint", a.IsSyncPoint).String())
		}
		for _, a := range m.ACKs {
			out = append(out, "  "+newLine("ack").kv("id", c.ids.alias(a.ID)).u("ts", a.BlockTs).flag("syncpoint", a.IsSyncPoint).String())
		}
		for _, a := range m.Actions {
			out = append(out, "  "+newLine("action").kv("id", c.ids.alias(a.ID)).kv("do", a.Action.String()).u("ts", a.CommitTs).
				flag("syncpoint", a.IsSyncPoint).String())
		}
		return out
	}
	return []string{fmt.Sprintf("%s %+v", msg.TypeName(), msg)}
}

// tsText prints MaxUint64 (an empty dispatcher manager's watermark) as "max".
func tsText(ts uint64) string {
	if ts == ^uint64(0) {
		return "max"
	}
	return strconv.FormatUint(ts, 10)
}

// parseBootstrapBlockState reads a bootstrap span's block state:
// block-ts=TS block-stage=Waiting|Writing|Done|None [block-tables=0,1]
// [block-drop=1] [block-add=2] [block-influence=db|all] [block-syncpoint].
func parseBootstrapBlockState(it *fields, id core.DispatcherID) (*core.BlockStatus, error) {
	bs := &core.BlockStatus{ID: id, Influence: spec.InfluenceNormal}
	var err error
	if bs.BlockTs, err = it.u64("block-ts"); err != nil {
		return nil, err
	}
	stage := it.str("block-stage")
	found := false
	for k, v := range stageNames {
		if v == stage {
			bs.Stage, found = k, true
		}
	}
	if !found {
		return nil, fmt.Errorf("block-stage=%q: want None, Waiting, Writing or Done", stage)
	}
	if it.has("block-tables") {
		for _, t := range strings.Split(it.str("block-tables"), ",") {
			n, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("block-tables=%q: %v", it.str("block-tables"), err)
			}
			bs.BlockTables = append(bs.BlockTables, n)
		}
	}
	for key, dst := range map[string]*[]int64{"block-drop": &bs.NeedDropped, "block-add": &bs.NeedAdded} {
		if !it.has(key) {
			continue
		}
		for _, t := range strings.Split(it.str(key), ",") {
			n, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s=%q: %v", key, it.str(key), err)
			}
			*dst = append(*dst, n)
		}
	}
	if it.has("block-influence") {
		switch v := it.str("block-influence"); v {
		case spec.InfluenceNormal, spec.InfluenceDB, spec.InfluenceAll:
			bs.Influence = v
		default:
			return nil, fmt.Errorf("block-influence=%q: want %s, %s or %s", v, spec.InfluenceNormal, spec.InfluenceDB, spec.InfluenceAll)
		}
	}
	bs.IsSyncPoint = it.has("block-syncpoint")
	return bs, nil
}

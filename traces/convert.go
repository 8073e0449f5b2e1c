package traces

import (
	"bytes"
	"strconv"
	"strings"

	"cdcspec/spec"
)

// The per-line converters of the catalogue (entry.conv): each reads what a
// line carries beyond its keyed fields (operator text, membership lists,
// durations) into the item it was converted to.

func reason(why string) func(r *Record, it *Item, out []Item) []Item {
	return func(r *Record, it *Item, out []Item) []Item {
		if it.Event.Reason == "" {
			it.Event.Reason = why
		}
		return out
	}
}

func setMerge(r *Record, it *Item, out []Item) []Item {
	it.Event.Merge = true
	return out
}

// convMaintainerStarted: TiCDC's removal-only maintainer
// (NewMaintainerForRemove) starts with checkpoint 1 and logs no
// removalOnly field; cdcspec's impl logs removalOnly explicitly.
func convMaintainerStarted(r *Record, it *Item, out []Item) []Item {
	if _, ok := r.Field("removalOnly"); !ok && it.Event.Checkpoint == 1 {
		it.Event.RemovalOnly = true
	}
	return out
}

// convOperator reads coordinator and maintainer operator lines. cdcspec's
// impl logs role and type/dest/origin fields; TiCDC logs role and the
// operator's String(), e.g. "add maintainer operator: default/cf, dest:n1",
// "move dispatcher operator: 123, origin:n1, dest:n2".
func convOperator(coordKind, maintKind spec.Kind) func(r *Record, it *Item, out []Item) []Item {
	return func(r *Record, it *Item, out []Item) []Item {
		opText, _ := r.fieldString("operator") // the last "operator" field: the String()
		role := string(fieldOr(r, "role"))
		isCoord := false
		switch {
		case role == "coordinator":
			isCoord = true
		case role == "maintainer":
			isCoord = false
		case strings.Contains(opText, "maintainer operator"):
			isCoord = true
		case strings.Contains(opText, "dispatcher operator"):
			isCoord = false
		default:
			_, hasD := r.Field("dispatcherID")
			_, hasS := r.Field("span")
			isCoord = !hasD && !hasS
		}
		ev := &it.Event
		if isCoord {
			ev.Kind = coordKind
			ev.Dispatcher, ev.Span = "", spec.Span{}
		} else {
			ev.Kind = maintKind
			ev.Removed, ev.Epoch = false, 0
		}
		if len(opText) > 0 {
			parseOperatorText(opText, ev, isCoord)
			if id := firstOperatorField(r); id != "" {
				it.OpID = id
			}
		}
		if it.OpID == "" {
			it.OpID = opIdentity(ev)
		}
		return out
	}
}

func fieldOr(r *Record, key string) []byte {
	v, _ := r.Field(key)
	return v
}

// firstOperatorField returns the first of two "operator" fields (TiCDC logs
// the operator ID, then its String()); "" if there is only one.
func firstOperatorField(r *Record) string {
	r.parseFields()
	var first *field
	count := 0
	for i := range r.fields {
		if f := &r.fields[i]; string(f.key) == "operator" || string(f.key) == "operatorID" {
			if count == 0 {
				first = f
			}
			count++
		}
	}
	if count >= 2 || (count == 1 && len(first.val) > 0 && !bytes.Contains(first.val, []byte(" operator"))) {
		return textOf(r.own, first.val, first.off)
	}
	return ""
}

func opIdentity(ev *spec.Event) string {
	if ev.Dispatcher != "" {
		return ev.Dispatcher
	}
	return ev.Changefeed
}

// parseOperatorText fills Op, Node (dest), Origin, Dispatcher and Removed
// from an operator's String() where the fields were not logged separately.
func parseOperatorText(s string, ev *spec.Event, coord bool) {
	if ev.Op == "" {
		word := s
		if i := strings.IndexByte(s, ' '); i > 0 {
			word = s[:i]
		}
		switch word {
		case "add", "move", "stop", "remove", "split", "merge", "occupy":
			ev.Op = spec.Op(word)
		}
	}
	if ev.Node == "" {
		ev.Node = opTextValue(s, "dest")
	}
	if ev.Origin == "" {
		ev.Origin = opTextValue(s, "origin")
	}
	after := ""
	if i := strings.Index(s, "operator: "); i >= 0 {
		after = s[i+len("operator: "):]
		if j := strings.IndexByte(after, ','); j >= 0 {
			after = after[:j]
		}
	}
	if coord {
		if ev.Changefeed == "" {
			ev.Changefeed = after
		}
		if ev.Op == spec.OpStop && !ev.Removed {
			ev.Removed = opTextValue(s, "remove") == "true"
		}
	} else if ev.Dispatcher == "" {
		if i := strings.Index(s, "dispatcherID: "); i >= 0 {
			after = s[i+len("dispatcherID: "):]
			if j := indexStop(after, &opValueStop); j >= 0 {
				after = after[:j]
			}
		}
		ev.Dispatcher = after
	}
}

// opTextValue returns the value after the first "key:" in an operator's
// text s, else after the first "key " (TiCDC's String() spells both), ""
// if s holds neither: one scan of s for both spellings.
func opTextValue(s, key string) string {
	colon, space := -1, -1 // where the value after each spelling starts
	for from := 0; colon < 0; {
		i := strings.Index(s[from:], key)
		if i < 0 {
			break
		}
		if j := from + i + len(key); j < len(s) {
			switch s[j] {
			case ':':
				colon = j + 1
			case ' ':
				if space < 0 {
					space = j + 1
				}
			}
		}
		from += i + 1
	}
	at := colon
	if at < 0 {
		at = space
	}
	if at < 0 {
		return ""
	}
	rest := strings.TrimLeft(s[at:], " ")
	if j := indexStop(rest, &opValueStop); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// convStillRunning reads "operator is still in running queue": the operator
// ID, its String() and timeSinceCreated (a Go duration).
func convStillRunning(r *Record, it *Item, out []Item) []Item {
	it.OpID = firstOperatorField(r)
	opText, _ := r.Field("operator")
	if it.OpID == "" {
		it.OpID = string(opText)
	}
	if d, ok := r.Field("timeSinceCreated"); ok {
		it.Dur = parseGoDuration(d)
	}
	it.Event.Reason = string(opText)
	return out
}

// convRedoStuck reads tiflow's redo meta warning: lastFlushTime is the time
// since the meta last changed, meta is JSON with the checkpoint.
func convRedoStuck(r *Record, it *Item, out []Item) []Item {
	if d, ok := r.Field("lastFlushTime"); ok {
		it.Dur = parseGoDuration(d)
	}
	if meta, ok := r.Field("meta"); ok {
		if i := bytes.Index(meta, []byte(`"CheckpointTs":`)); i >= 0 {
			rest := meta[i+len(`"CheckpointTs":`):]
			j := 0
			for j < len(rest) && isDigit(rest[j]) {
				j++
			}
			it.Event.Checkpoint = parseTs(rest[:j])
		}
	}
	return out
}

// convMembership turns addedNodes/removedNodes lists into NodeJoined and
// NodeLeft events (one item per node), keeping the membership symptom.
func convMembership(r *Record, it *Item, out []Item) []Item {
	added := parseNodeList(fieldOr(r, "addedNodes"))
	removed := parseNodeList(fieldOr(r, "removedNodes"))
	if len(added) == 0 && len(removed) == 0 {
		return out
	}
	base := *it
	out = out[:len(out)-1]
	for _, n := range added {
		c := base
		c.Event.Kind = spec.NodeJoined
		c.Event.Node = n
		out = append(out, c)
	}
	for _, n := range removed {
		c := base
		c.Event.Kind = spec.NodeLeft
		c.Event.Node = n
		out = append(out, c)
	}
	return out
}

// parseNodeList reads ["a","b"] or [a,b] (zap arrays of strings or of
// node.ID values) into node IDs.
func parseNodeList(v []byte) []string {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '[' {
		return nil
	}
	v = v[1 : len(v)-1]
	var out []string
	for _, p := range bytes.Split(v, []byte(",")) {
		p = bytes.Trim(bytes.TrimSpace(p), `"{}`)
		if i := bytes.IndexByte(p, ':'); i >= 0 && bytes.HasPrefix(p, []byte(`id`)) {
			p = bytes.Trim(p[i+1:], `" `)
		}
		if len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out
}

// parseGoDuration parses a Go duration ("2h30m11s", "9m21.99436182s") or a
// number of nanoseconds into milliseconds.
func parseGoDuration(v []byte) int64 {
	s := strings.Trim(string(v), `"`)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n / 1e6
	}
	var total float64
	for s != "" {
		i := 0
		for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
			i++
		}
		if i == 0 {
			return int64(total)
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return int64(total)
		}
		s = s[i:]
		j := 0
		for j < len(s) && !isDigit(s[j]) && s[j] != '.' {
			j++
		}
		unit := s[:j]
		s = s[j:]
		switch unit {
		case "h":
			total += n * 3600e3
		case "m":
			total += n * 60e3
		case "s":
			total += n * 1e3
		case "ms":
			total += n
		case "us", "µs":
			total += n / 1e3
		case "ns":
			total += n / 1e6
		default:
			return int64(total)
		}
	}
	return int64(total)
}

package traces

import (
	"bytes"
	"strings"

	"cdcspec/spec"
)

// The barrier's lines (spec/barrier.go): how TiCDC HEAD and cdcspec's impl
// spell a block event's fields, read back into spec events.

// parseInfluence reads an influence type as TiCDC logs
// heartbeatpb.InfluenceType ("Normal", "DB", "All") or as cdcspec's spec
// spells it (spec.InfluenceNormal, InfluenceDB, InfluenceAll): lower-cased.
func parseInfluence(v []byte) string {
	return strings.ToLower(strings.Trim(string(v), `"`))
}

// convBlockStatus keeps a block status's stage as heartbeatpb.BlockStage
// spells it (WAITING, DONE): setField lower-cases State.
func convBlockStatus(r *Record, it *Item, out []Item) []Item {
	it.Event.State = strings.ToUpper(it.Event.State)
	return out
}

// convBlockAction reads the maintainer's action from "pending event get the
// action". TiCDC logs the action twice: action, the DispatcherAction's
// compact proto text ("action:Pass CommitTs:449 IsSyncPoint:true"; proto3
// omits zero values, so Write and a DDL's IsSyncPoint:false do not appear),
// and innerAction, its number (Write 0, Pass 1). cdcspec's impl logs
// action=write or action=pass.
func convBlockAction(r *Record, it *Item, out []Item) []Item {
	e := &it.Event
	text, _ := r.Field("action")
	if n, ok := r.Field("innerAction"); ok {
		switch string(n) {
		case "0":
			e.State = spec.ActionWrite
		case "1":
			e.State = spec.ActionPass
		}
	} else if e.State != spec.ActionWrite && e.State != spec.ActionPass && len(text) > 0 {
		e.State = spec.ActionWrite
		if bytes.Contains(text, []byte("action:Pass")) {
			e.State = spec.ActionPass
		}
	}
	if bytes.Contains(text, []byte("IsSyncPoint:true")) {
		e.SyncPoint = true
	}
	if e.Checkpoint == 0 {
		if i := bytes.Index(text, []byte("CommitTs:")); i >= 0 {
			rest := text[i+len("CommitTs:"):]
			j := 0
			for j < len(rest) && isDigit(rest[j]) {
				j++
			}
			e.Checkpoint = parseTs(rest[:j])
		}
	}
	return out
}

package kafkasink

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var weird = []string{"", "plain", `"quoted"`, `back\slash`, "new\nline\r\t", "\x00\x01\x1f\x7f",
	"<html>&amp;", "中文 ✓ 😀", "\u2028\u2029", "\b\f", strings.Repeat("x", 5000)}

func randString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return weird[r.IntN(len(weird))]
	}
	runes := []rune{'a', '"', '\\', '\n', 0, 0x1f, '<', '&', 'é', '中', '😀', '\u2028', 0x7f, '/'}
	var b strings.Builder
	for n := r.IntN(20); n > 0; n-- {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// TestEncodeMatchesEncodingJSON: the hand-written encoder produces JSON that
// decodes to exactly the Message encoding/json would build, and
// DecodeMessage inverts EncodeRow.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fastHits := 0
	defer func() {
		if fastHits < 100 {
			t.Errorf("fast decode path taken %d times, want >= 100", fastHits)
		}
	}()
	for i := 0; i < 3000; i++ {
		str := randString
		if i%4 == 0 {
			str = func(r *rand.Rand) string { return fmt.Sprint("plain-é-", r.IntN(1000)) }
		}
		row := Row{
			Changefeed: str(r), Dispatcher: str(r), Schema: str(r),
			Table: "t" + str(r), Key: "k" + str(r), CommitTs: r.Uint64N(1<<63) + 1,
			Op: Op(r.IntN(3)), Value: str(r), OldValue: str(r),
		}
		b := EncodeRow(nil, &row, 1234)
		if !json.Valid(b) {
			t.Fatalf("invalid JSON for %+v: %s", row, b)
		}
		var got, want Message
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want = Message{Database: row.SchemaOrDefault(), Table: row.Table, PKNames: []string{"id"}, Type: row.Op.String(),
			ES: Physical(row.CommitTs), TS: 1234, SQLType: map[string]int{"id": 12, "v": 2005},
			MySQLType: map[string]string{"id": "varchar", "v": "text"},
			Data:      []map[string]string{{"id": row.Key, "v": row.Value}},
			TiDB:      &TiDBExtension{CommitTs: row.CommitTs, Changefeed: row.Changefeed, Dispatcher: row.Dispatcher}}
		if row.Op == OpUpdate {
			want.Old = []map[string]string{{"v": row.OldValue}}
		}
		wb, _ := json.Marshal(want)
		var want2 Message
		json.Unmarshal(wb, &want2)
		if !reflect.DeepEqual(got, want2) {
			t.Fatalf("encoded %s\nwant     %s", b, wb)
		}
		dec, err := DecodeMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := decodeSlow(b)
		if err != nil {
			t.Fatal(err)
		}
		fast, ok := decodeFast(b)
		if ok && fast != slow {
			t.Fatalf("fast decode %+v, slow decode %+v of %s", fast, slow, b)
		}
		if !ok && !strings.ContainsAny(string(b[:len(b)-2]), "\\") {
			t.Fatalf("fast path refused an escape-free message %s", b)
		}
		if ok {
			fastHits++
		}
		exp := row
		exp.Schema = row.SchemaOrDefault()
		if row.Op != OpUpdate {
			exp.OldValue = ""
		}
		if dec != exp {
			t.Fatalf("decoded %+v, want %+v", dec, exp)
		}
	}
}

func TestDecodeOtherFieldOrder(t *testing.T) {
	// Another canal-json writer's field order goes through the slow path.
	msg := `{"_tidb":{"commitTs":7},"type":"DELETE","table":"t","database":"db","data":[{"v":"x","id":"k"}],"old":null,"isDdl":false}`
	if _, ok := decodeFast([]byte(msg)); ok {
		t.Fatal("fast path took a foreign layout")
	}
	r, err := DecodeMessage([]byte(msg))
	if err != nil || r != (Row{Schema: "db", Table: "t", Key: "k", CommitTs: 7, Op: OpDelete, Value: "x"}) {
		t.Fatalf("%+v %v", r, err)
	}
	good := EncodeRow(nil, &Row{Table: "t", Key: "k", CommitTs: 5}, 1)
	for _, bad := range []string{
		strings.Replace(string(good), `"commitTs":5`, `"commitTs":05`, 1),
		strings.Replace(string(good), `"commitTs":5`, `"commitTs":0`, 1),
		string(good) + " ",
		string(good[:len(good)-1]),
	} {
		if _, ok := decodeFast([]byte(bad)); ok {
			t.Errorf("fast path accepted %s", bad)
		}
	}
}

func TestDecodeMessageRejects(t *testing.T) {
	for _, bad := range []string{
		`nope`,
		`{"isDdl":true,"type":"CREATE","_tidb":{"commitTs":1}}`,
		`{"type":"INSERT","data":[{"id":"1"}]}`,
		`{"type":"TRUNCATE","data":[{"id":"1"}],"_tidb":{"commitTs":1}}`,
		`{"type":"INSERT","data":[],"_tidb":{"commitTs":1}}`,
		`{"type":"INSERT","data":[{"v":"1"}],"_tidb":{"commitTs":1}}`,
	} {
		if r, err := DecodeMessage([]byte(bad)); err == nil {
			t.Errorf("DecodeMessage(%s) = %+v, want an error", bad, r)
		}
	}
}

func TestTopicName(t *testing.T) {
	if got := TopicName("default/cf-1"); got != "cdcspec-default_cf-1" {
		t.Fatal(got)
	}
	if got := TopicName("a b.c_d-é"); got != "cdcspec-a_b.c_d-__" {
		t.Fatal(got)
	}
}

func BenchmarkDecodeMessage(b *testing.B) {
	row := Row{Changefeed: "default/cf", Dispatcher: "d-1", Table: "t1", Key: "12345", CommitTs: 454123456789012481,
		Value: "value-0123456789-0123456789-0123456789"}
	msg := EncodeRow(nil, &row, 1)
	for i := 0; i < b.N; i++ {
		if _, err := DecodeMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeRow(b *testing.B) {
	row := Row{Changefeed: "default/cf", Dispatcher: "d-1", Table: "t1", Key: "12345", CommitTs: 454123456789012481,
		Value: "value-0123456789-0123456789-0123456789"}
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = EncodeRow(buf[:0], &row, 1)
	}
}

func TestSyntheticRow(t *testing.T) {
	r := SyntheticRow("cf", "d", 7, "abc", 42)
	if r.Table != "t7" || r.Key != "abc" || r.CommitTs != 42 || r.Op != OpUpdate || r.Value != "t7/abc@42" || r.Dispatcher != "d" {
		t.Fatalf("%+v", r)
	}
	got, err := DecodeMessage(EncodeRow(nil, &r, 0))
	r.Schema = DefaultSchema
	if err != nil || got != r {
		t.Fatalf("round trip %+v, %v", got, err)
	}
}

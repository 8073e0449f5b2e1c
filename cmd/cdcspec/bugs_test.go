package main

import (
	"encoding/json"
	"strings"
	"testing"

	"cdcspec/model"
	"cdcspec/spec"
)

func TestBugsJSON(t *testing.T) {
	code, out, _ := runCheckCmd("bugs", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var bs []bugJSON
	if err := json.Unmarshal([]byte(out), &bs); err != nil {
		t.Fatal(err)
	}
	if len(bs) != len(spec.Bugs()) {
		t.Fatalf("%d bugs, want %d", len(bs), len(spec.Bugs()))
	}
	for i, b := range spec.Bugs() {
		if bs[i].Name != b.Name || bs[i].Property != string(b.Property) {
			t.Errorf("row %d: %+v", i, bs[i])
		}
		if bs[i].Delivery != string(b.Delivery.OrDefault()) {
			t.Errorf("%s: delivery %q, want %q", b.Name, bs[i].Delivery, b.Delivery)
		}
		if _, ok := model.Standard(bs[i].Config); !ok {
			t.Errorf("%s: config %q is not a standard configuration", b.Name, bs[i].Config)
		}
	}
}

func TestBugsText(t *testing.T) {
	code, out, _ := runCheckCmd("bugs")
	if code != exitOK || !strings.Contains(out, "regressed-checkpoint-drops-error") || !strings.Contains(out, "CONFIG") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if code, _, _ := runCheckCmd("bugs", "--format", "yaml"); code != exitUsage {
		t.Fatalf("bad format: exit %d", code)
	}
}

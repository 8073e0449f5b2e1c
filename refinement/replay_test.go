package refinement

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"cdcspec/impl/core"
	"cdcspec/model"
	"cdcspec/spec"
)

// replayExpect pins, per catalogued bug, whether replaying the model's
// counterexample (testdata/model/<bug>.json, recorded with
// `cdcspec check --config <bug config> --bug <bug> --format json`) makes the
// implementation show the same violation. A change in either direction
// fails: a replay that stops reproducing, or one that starts to (update the
// pin and the readme).
var replayExpect = map[string]bool{
	"regressed-checkpoint-drops-error":      false,
	"add-accepts-unbootstrapped-maintainer": false,
	"restored-create-ignored-for-new-table": true,
	"inflight-operators-lost-on-failover":   false,
	"stuck-after-upstream-failure":          true,
	"no-epoch-fencing":                      true,
	"trigger-passes-add-table-ddl":          false,
	// The barrier's windows (a move between the writer's DONE and its next
	// flush; a DB event reported before the CREATE TABLE's NONE reaches the
	// maintainer) last 100-200 ms; the script's steps are seconds apart.
	"writer-not-passed-after-move":   false,
	"db-ddl-before-table-ddls-acked": false,
	// The model's story needs the new table's dispatcher to flush before
	// the trigger gets its Write; in the implementation the Write leaves
	// with the selection's own response, so the script (no message lost)
	// never opens that window (the gate's profile drops HeartBeatResponses).
	"new-table-scheduled-at-selection": false,
	// The replay maps no model split (maintainer-split) to the
	// implementation's split-table (the table in replay.go).
	"split-double-add": false,
	// The replay maps no client pause or remove of the model's lifecycle
	// configuration: the script keeps only the create and the time.
	"stop-replaces-pending-stop":  false,
	"move-final-stopped-rejected": true,
}

// TestReplayModelCounterexamples: for every catalogued bug, the model's
// counterexample replayed on the implementation with the bug on; and with
// every fix on the same script must show nothing of that property.
func TestReplayModelCounterexamples(t *testing.T) {
	for _, b := range spec.Bugs() {
		b := b
		t.Run(b.Name, func(t *testing.T) {
			if b.ModelGap != "" {
				t.Skipf("no model counterexample: the model cannot express %s yet (%s)", b.Name, b.ModelGap)
			}
			if b.ImplGap != "" {
				t.Skipf("the implementation cannot express %s yet (%s)", b.Name, b.ImplGap)
			}
			path := filepath.Join("testdata", "model", b.Name+".json")
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%s: %v (record it with cdcspec check --bug %s --format json)", path, err, b.Name)
			}
			cfg, acts, prop, bugs, err := ParseCounterexample(raw)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if prop != b.Property {
				t.Logf("note: the model's counterexample violates %s first; the catalogue names %s", prop, b.Property)
			}
			res, err := ReplayModel(cfg, acts, prop, bugs, ReplayOptions{})
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			t.Logf("%s", res.Report())
			if want, ok := replayExpect[b.Name]; ok && want != res.Reproduced {
				t.Errorf("replay of %s: reproduced=%v, pinned %v", b.Name, res.Reproduced, want)
			}
			off, err := ReplayModel(cfg, acts, prop, nil, ReplayOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if off.Reproduced {
				t.Errorf("with every fix on, the replayed script still shows %s: %s\n%s", prop, off.Message, off.Report())
			}
		})
	}
}

// TestParseCounterexampleBadInput: a check result without a violation, or
// broken JSON, is an error.
func TestParseCounterexampleBadInput(t *testing.T) {
	if _, _, _, _, err := ParseCounterexample([]byte(`{"result":"ok","config":{}}`)); err == nil {
		t.Fatal("a result without violation must be an error")
	}
	if _, _, _, _, err := ParseCounterexample([]byte(`{`)); err == nil {
		t.Fatal("broken json must be an error")
	}
}

// TestImplMsgType: every model message kind maps to the implementation's
// message type that carries it (core.MessageKind.ModelKinds), which the
// replay's message rules name.
func TestImplMsgType(t *testing.T) {
	for _, mk := range model.MessageKindNames() {
		k, ok := core.KindOfModel(mk)
		if assert.True(t, ok, "model kind %s has no implementation type", mk) {
			assert.Equal(t, k.Name, implMsgType(mk), "implMsgType(%s)", mk)
		}
	}
	assert.Equal(t, "MaintainerHeartbeat", implMsgType("MaintainerStatus"))
	assert.Equal(t, "HeartBeatResponse", implMsgType("HeartBeatResponse(action)"))
}

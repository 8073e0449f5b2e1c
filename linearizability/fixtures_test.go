package linearizability

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// fixtureTimeout is generous: every fixture checks in microseconds.
const fixtureTimeout = 10 * time.Second

// requiredFixtures are the verdicts the brief pins; deleting one fails.
var requiredFixtures = []string{
	"admin-ok-sequential",
	"admin-ok-concurrent-overlap",
	"admin-bad-checkpoint-regression",
	"admin-bad-resume-from-normal",
	"admin-bad-get-after-remove",
	"admin-ok-resume-overwrite-lower",
	"admin-ok-unknown-outcome-rescues",
	"admin-bad-unknown-outcome-does-not-rescue",
	"register-ok-max",
	"register-bad-regression",
}

func loadFixtures(t *testing.T) map[string]History {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]History{}
	for _, p := range paths {
		h, err := ReadHistory(p)
		if err != nil {
			t.Fatalf("fixture %s: %v", p, err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		if h.Name != name {
			t.Fatalf("fixture %s: name %q does not match the file name", p, h.Name)
		}
		if len(h.Expect) == 0 {
			t.Fatalf("fixture %s: no expected verdict", p)
		}
		out[name] = h
	}
	return out
}

// TestFixtureVerdicts checks every testdata/*.json history against every
// model named in its "expect" map and asserts the verdict. A failing
// (Illegal) fixture must also produce the HTML visualization.
func TestFixtureVerdicts(t *testing.T) {
	fixtures := loadFixtures(t)
	for _, name := range requiredFixtures {
		if _, ok := fixtures[name]; !ok {
			t.Errorf("required fixture testdata/%s.json is missing", name)
		}
	}
	names := make([]string, 0, len(fixtures))
	for n := range fixtures {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		h := fixtures[name]
		models := make([]string, 0, len(h.Expect))
		for m := range h.Expect {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, modelName := range models {
			want := porcupine.CheckResult(h.Expect[modelName])
			t.Run(name+"/"+modelName, func(t *testing.T) {
				if want != porcupine.Ok && want != porcupine.Illegal {
					t.Fatalf("fixture %s: expected verdict %q for %s; want Ok or Illegal", name, want, modelName)
				}
				m, err := ModelByName(modelName)
				if err != nil {
					t.Fatal(err)
				}
				root := t.TempDir()
				res, err := CheckWith(m, h, CheckOptions{Timeout: fixtureTimeout, ArtifactRoot: root, Log: testLog{t}})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != want {
					t.Fatalf("fixture %s under %s: got %s, want %s\nstory: %s", name, modelName, res, want, h.Story)
				}
				if want == porcupine.Illegal {
					assertArtifacts(t, res.ArtifactDir)
					if !strings.Contains(res.Message, "not linearizable") {
						t.Errorf("message %q does not say not linearizable", res.Message)
					}
				} else if res.ArtifactDir != "" {
					t.Errorf("Ok check wrote artifacts to %s", res.ArtifactDir)
				}
			})
		}
	}
}

// TestUnknownOutcomeIsWhatRescues pins that the rescue in
// admin-ok-unknown-outcome-rescues comes from the unknown outcome: the same
// history with the pause recorded as succeeding at its own return time is
// still Ok, and recorded as a definite rejection it is Illegal.
func TestUnknownOutcomeIsWhatRescues(t *testing.T) {
	h := loadFixtures(t)["admin-ok-unknown-outcome-rescues"]
	idx := -1
	for i, op := range h.Ops {
		if op.Output.Unknown {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatal("fixture has no unknown outcome")
	}
	for _, tc := range []struct {
		out  Output
		want porcupine.CheckResult
	}{
		{Output{}, porcupine.Ok},
		{Output{Err: CodeRejected}, porcupine.Illegal},
		{Output{Err: CodeInvalidState}, porcupine.Illegal},
	} {
		mutated := h
		mutated.Ops = append([]Op(nil), h.Ops...)
		mutated.Ops[idx].Output = tc.out
		res, err := CheckWith(AdminModel(), mutated, CheckOptions{Timeout: fixtureTimeout, Artifacts: ArtifactsNever})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.want {
			t.Errorf("pause output %+v: got %s, want %s", tc.out, res, tc.want)
		}
	}
}

func assertArtifacts(t *testing.T, dir string) {
	t.Helper()
	if dir == "" {
		t.Fatal("failed check wrote no artifact folder")
	}
	for _, f := range []string{"history.html", "history.json", "result.txt"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("artifact %s: %v", f, err)
		}
		if st.Size() == 0 {
			t.Fatalf("artifact %s is empty", f)
		}
	}
	// The JSON artifact must reload to the same history.
	if _, err := ReadHistory(filepath.Join(dir, "history.json")); err != nil {
		t.Fatalf("history.json does not reload: %v", err)
	}
}

// testLog routes Check's artifact line to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var (
	replayHistory = flag.String("history", "", "TestReplayArtifact: a history.json to re-check")
	replayModel   = flag.String("model", AdminModelName, "TestReplayArtifact: model name")
)

// TestReplayArtifact re-checks a history written by a failed check:
//
//	go test ./linearizability/ -run TestReplayArtifact -args -model admin -history <dir>/history.json
func TestReplayArtifact(t *testing.T) {
	if *replayHistory == "" {
		t.Skip("no -history given")
	}
	h, err := ReadHistory(*replayHistory)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ModelByName(*replayModel)
	if err != nil {
		t.Fatal(err)
	}
	res, err := CheckWith(m, h, CheckOptions{Timeout: time.Minute, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if !res.Ok() {
		t.Fatal(res.Message)
	}
}

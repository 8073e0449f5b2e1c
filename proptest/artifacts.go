package proptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cdcspec/model"
	"cdcspec/refinement"
	"cdcspec/refinement/drive"
)

// ArtifactsEnv overrides the artifact root: folders go to
// $CDCSPEC_ARTIFACTS/proptest/.
const ArtifactsEnv = "CDCSPEC_ARTIFACTS"

// ArtifactRoot is $CDCSPEC_ARTIFACTS/proptest if set, else
// <module root>/artifacts/proptest (git-ignored), else a temp directory.
func ArtifactRoot() string {
	if env := os.Getenv(ArtifactsEnv); env != "" {
		return filepath.Join(env, "proptest")
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.Join(dir, "artifacts", "proptest")
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return filepath.Join(os.TempDir(), "cdcspec-artifacts", "proptest")
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// WriteArtifacts re-runs a failing story with the TiCDC-format log on and
// writes a folder <root>/<name>-<time>/ holding:
//
//	story.json     the setup and the action list (replayable: Run / TestReplayStory)
//	actions.txt    the action list, one step per line
//	impl.log       the simulation's log in TiCDC's format (debug level)
//	violation.txt  the violated property and message, and the replay command
//	events.txt     the implementation's spec events
//	model.txt      the shadow model's trace, when the shadow followed the run
//
// It returns the folder.
func WriteArtifacts(name string, story drive.Story, replay string) (string, error) {
	dir := filepath.Join(ArtifactRoot(), safeName(name)+"-"+time.Now().UTC().Format("20060102-150405.000"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var log bytes.Buffer
	sh := refinement.NewShadow(story.Setup)
	d, f, err := drive.Run(story, &log, sh)
	write := func(file string, b []byte) {
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, file), b, 0o644)
		}
	}
	var v strings.Builder
	if err != nil {
		fmt.Fprintf(&v, "the story did not replay: %v\n", err)
		err = nil
	}
	if f != nil {
		fmt.Fprintf(&v, "violated: %s\n%s\ndelivery: %s\n", f.Property, f.Message, f.Delivery.Label())
		if f.Step >= 0 {
			fmt.Fprintf(&v, "found after step %d: %s\n", f.Step+1, story.Steps[f.Step])
		} else {
			fmt.Fprintf(&v, "found after the faults healed and the cluster quiesced\n")
		}
	} else {
		fmt.Fprintf(&v, "the replay found no violation (a failure that depends on the rapid engine, not the story?)\n")
	}
	fmt.Fprintf(&v, "\nreplay: %s\n", replay)
	write("story.json", drive.MarshalStory(story))
	var acts strings.Builder
	fmt.Fprintf(&acts, "setup: seed=%d captures=%d tables=%d bugs=%v raw-watermark=%v delivery=%s\n", story.Setup.Seed, story.Setup.Nodes, story.Setup.Tables, story.Setup.Bugs, story.Setup.RawWatermark, story.Setup.Delivery.OrDefault())
	for i, st := range story.Steps {
		fmt.Fprintf(&acts, "%3d. %s\n", i+1, st)
	}
	write("actions.txt", []byte(acts.String()))
	write("impl.log", log.Bytes())
	write("violation.txt", []byte(v.String()))
	if d != nil {
		var evs strings.Builder
		for _, e := range d.Sim.Events() {
			fmt.Fprintf(&evs, "%d %s\n", e.Time, e)
		}
		write("events.txt", []byte(evs.String()))
		var m strings.Builder
		fmt.Fprintf(&m, "model config: %s\nstopped following: %q\nfinal model state:\n%s\nmodel actions (settle steps included):\n", sh.Cfg.String(), sh.Stopped, sh.State.String())
		for i, a := range sh.Trace {
			fmt.Fprintf(&m, "%4d. %s\n", i+1, a)
		}
		write("model.txt", []byte(m.String()))
		if b, jerr := json.Marshal(sh.Trace); jerr == nil {
			write("model-actions.json", b)
		}
	}
	return dir, err
}

// ModelActionsJSON renders model actions in the model's exported form.
func ModelActionsJSON(as []model.Action) ([]byte, error) { return json.Marshal(as) }

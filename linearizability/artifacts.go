package linearizability

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// ArtifactsEnv overrides the artifact root: folders go to
// $CDCSPEC_ARTIFACTS/linearizability/.
const ArtifactsEnv = "CDCSPEC_ARTIFACTS"

// DefaultArtifactRoot is $CDCSPEC_ARTIFACTS/linearizability if set, else
// <module root>/artifacts/linearizability (the module root is the nearest
// directory above the working directory holding go.mod; /artifacts/ is
// git-ignored), else <tmp>/cdcspec-artifacts/linearizability.
func DefaultArtifactRoot() string {
	if env := os.Getenv(ArtifactsEnv); env != "" {
		return filepath.Join(env, "linearizability")
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.Join(dir, "artifacts", "linearizability")
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return filepath.Join(os.TempDir(), "cdcspec-artifacts", "linearizability")
}

// sanitizeName makes s safe as one path element (test names contain '/').
func sanitizeName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
	if s == "" || strings.Trim(s, ".") == "" {
		return "history"
	}
	return s
}

// writeArtifacts writes <root>/<name>-<timestamp>/ with history.html
// (porcupine's visualization), history.json (reloadable with ReadHistory)
// and result.txt, and returns the folder.
func writeArtifacts(m Model, h History, info porcupine.LinearizationInfo, res Result, opts CheckOptions) (string, error) {
	root := opts.ArtifactRoot
	if root == "" {
		root = DefaultArtifactRoot()
	}
	name := opts.Name
	if name == "" {
		name = h.Name
	}
	if name == "" {
		name = m.Name
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("linearizability: artifact root: %w", err)
	}
	base := filepath.Join(root, sanitizeName(name)+"-"+time.Now().UTC().Format("20060102T150405.000000000Z"))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("linearizability: artifact folder: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
	if err := porcupine.VisualizePath(m.porcupine, info, filepath.Join(dir, "history.html")); err != nil {
		return dir, fmt.Errorf("linearizability: write visualization: %w", err)
	}
	if err := WriteHistory(filepath.Join(dir, "history.json"), h); err != nil {
		return dir, err
	}
	text := fmt.Sprintf("model: %s\nverdict: %s\n%s\nops: %d, partitions: %d, timeout: %v, elapsed: %v\nreplay: go test ./linearizability/ -run TestReplayArtifact -args -model %s -history %s\n",
		m.Name, res.Verdict, res.Message, res.Ops, res.Partitions, res.Timeout, res.Elapsed, m.Name, filepath.Join(dir, "history.json"))
	if err := os.WriteFile(filepath.Join(dir, "result.txt"), []byte(text), 0o644); err != nil {
		return dir, fmt.Errorf("linearizability: write result: %w", err)
	}
	return dir, nil
}

package proptest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/refinement"
	"cdcspec/refinement/drive"
)

// TestRegressionStories replays every story in testdata/stories, each a
// counterexample rapid once found and a fix since closed, and requires that
// none violates a property any more:
//
//   - stop-after-move-origin-left: rapid seed 993810847477092388 of
//     TestProtocol. A move-maintainer's origin dies, then the changefeed is
//     removed: the stop aims at the move's origin, a node the coordinator
//     already saw leave. Without HEAD's checkAffectedNodes (the operator
//     controller's pushOperator) the stop was sent to the dead node forever
//     and the removed changefeed kept a live dispatcher
//     (stop-closes-dispatchers).
func TestRegressionStories(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "stories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			story, err := drive.UnmarshalStory(b)
			require.NoError(t, err)
			_, f, err := drive.Run(story, nil, refinement.NewShadow(story.Setup))
			require.NoError(t, err)
			require.Nil(t, f, "%s: %v", path, f)
		})
	}
}

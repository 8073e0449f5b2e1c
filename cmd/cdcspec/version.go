package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"cdcspec/spec"
)

func init() {
	register("version", versionHelp.summary, runVersion)
}

// versionHelp is `cdcspec version -h`.
var versionHelp = help{
	summary:  "print cdcspec's module version and the TiCDC commit its rules cite",
	usage:    "",
	examples: []string{"cdcspec version"},
	exits:    []string{"0  printed", "2  usage error"},
}

// runVersion prints the module version from the binary's build info (with
// the VCS revision when the build recorded one) and spec.HeadCommit, the
// pingcap/ticdc commit cdcspec's rules are read against.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", versionHelp, stdout, stderr)
	if code, ok := fs.parse(args, false); !ok {
		return code
	}
	fmt.Fprintf(stdout, "cdcspec %s\n", moduleVersion())
	fmt.Fprintf(stdout, "TiCDC HEAD pinned: pingcap/ticdc@%s\n", spec.HeadCommit)
	return exitOK
}

// moduleVersion is the main module's version ("(devel)" for a build from a
// checkout), the VCS revision and whether the tree was modified, and the Go
// version.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build info)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += fmt.Sprintf(" (revision %s%s)", rev, modified)
	}
	return v + ", " + bi.GoVersion
}

#!/usr/bin/env bash
# The detection matrix (make bugs): for each catalogued bug, which checkers
# find it, how fast, and the length of the shortest counterexample.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/cdcspec ./cmd/cdcspec
exec go run ./scripts/bugmatrix "$@"

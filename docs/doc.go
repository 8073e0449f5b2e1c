// Package docs holds cdcspec's documentation pages (*.md) and the test that
// checks every command they show against the real binary, Makefile and
// packages (docs_test.go; development.md, "Documented commands are checked").
package docs

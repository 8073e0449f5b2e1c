package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/model"
	"cdcspec/spec"
)

func TestBugsJSON(t *testing.T) {
	code, out, _ := runCheckCmd("bugs", "--format", "json")
	require.Equal(t, exitOK, code)
	var bs []bugJSON
	require.NoError(t, json.Unmarshal([]byte(out), &bs))
	require.Len(t, bs, len(spec.Bugs()))
	for i, b := range spec.Bugs() {
		assert.Equal(t, b.Name, bs[i].Name)
		assert.Equal(t, string(b.Property), bs[i].Property)
		assert.Equal(t, string(b.ModelProperty), bs[i].ModelProperty)
		assert.Equal(t, b.Kind.String(), bs[i].Kind)
		assert.Equal(t, string(b.Delivery), bs[i].Delivery)
		if b.ModelGap != "" {
			assert.Empty(t, bs[i].Config, "%s cannot be expressed in the model", b.Name)
			assert.Contains(t, bs[i].Command, "cdcspec sim")
			continue
		}
		_, ok := model.Standard(bs[i].Config)
		assert.True(t, ok, "%s: config %q is not a standard configuration", b.Name, bs[i].Config)
		assert.Contains(t, bs[i].Command, "cdcspec check --config "+bs[i].Config+" --bug "+b.Name)
	}
}

func TestBugsText(t *testing.T) {
	code, out, _ := runCheckCmd("bugs")
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "regressed-checkpoint-drops-error")
	assert.Contains(t, out, "MODEL CONFIG")
	code, _, _ = runCheckCmd("bugs", "--format", "yaml")
	assert.Equal(t, exitUsage, code, "bad format")
}

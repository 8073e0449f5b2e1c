package sim

import (
	"os"
	"testing"
)

func TestSmoke(t *testing.T) {
	f, _ := os.Create("/tmp/smoke/log.txt")
	defer f.Close()
	s := New(Config{Seed: 1, Log: f, LogLevel: "debug", RecordEvents: true})
	if err := s.CreateChangefeed("cf1"); err != nil {
		t.Fatal(err)
	}
	s.RunFor(10_000)
	st := s.State()
	for _, cf := range st.Changefeeds {
		t.Logf("%+v", cf)
	}
	for _, n := range st.Nodes {
		t.Logf("node %s owner=%v maint=%+v", n.ID, n.Owner, n.Maintainers)
		for _, d := range n.Dispatchers {
			t.Logf("   %+v", d)
		}
	}
	for _, v := range s.Violations() {
		t.Errorf("%s", v)
	}
	t.Logf("delivered %d events %d", s.Delivered, len(s.Events()))
}

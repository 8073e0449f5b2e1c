package spec

import "testing"

// TestDeliveryNames: every delivery parses back from its name, "" is the
// message center, an unknown name is an error; only the message center is
// TiCDC's and only it refuses duplicates.
func TestDeliveryNames(t *testing.T) {
	for _, d := range Deliveries() {
		got, err := ParseDelivery(string(d))
		if err != nil || got != d {
			t.Errorf("ParseDelivery(%q) = %q, %v", d, got, err)
		}
		if d.TiCDC() != (d == DeliveryMessageCenter) || d.Duplicates() == d.TiCDC() {
			t.Errorf("%s: TiCDC()=%v Duplicates()=%v", d, d.TiCDC(), d.Duplicates())
		}
	}
	if d, err := ParseDelivery(""); err != nil || d != DeliveryMessageCenter {
		t.Errorf(`ParseDelivery("") = %q, %v`, d, err)
	}
	if _, err := ParseDelivery("fifo"); err == nil {
		t.Error("an unknown delivery parsed")
	}
}

// TestBugsRecordDelivery: every catalogued bug records a known delivery
// assumption.
func TestBugsRecordDelivery(t *testing.T) {
	for _, b := range Bugs() {
		if _, err := ParseDelivery(string(b.Delivery)); err != nil || b.Delivery == "" {
			t.Errorf("bug %s: delivery %q: %v", b.Name, b.Delivery, err)
		}
	}
}

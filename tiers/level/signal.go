package level

// The FSM events that health signals carry; they are also the reason of a
// level message on the wire.
const (
	VendorAllDown    = "vendor_all_down"
	LocalFailing     = "local_failing"
	TemplatesFailing = "templates_failing"
	Recovered        = "recovered"
)

// DownEvent is the FSM event of level l going down ("" for L4 and None,
// which cannot go down).
func DownEvent(l Level) string {
	switch l {
	case L1:
		return VendorAllDown
	case L2:
		return LocalFailing
	case L3:
		return TemplatesFailing
	}
	return ""
}

// Signal is a level-driving event from the health center. Event is
// DownEvent(Level) when Level went down, or Recovered when Level is
// healthy again.
type Signal struct {
	Event string
	Level Level
}

package level

import "fmt"

// Level is an answer level: L1 hedged vendors, L2 the local model, L3
// template recall, L4 the static coach. A lower number is a better level.
type Level int

// None is the level of a backend that serves no answer level (a gateway
// endpoint): the health center tracks it as a backend only.
const None Level = 0

// The four answer levels.
const (
	L1 Level = 1 + iota
	L2
	L3
	L4
)

// String returns "L1".."L4"; the FSM state names and the wire format use it.
func (l Level) String() string {
	if l < L1 || l > L4 {
		return fmt.Sprintf("L?%d", int(l))
	}
	return fmt.Sprintf("L%d", int(l))
}

// Parse parses "L1".."L4".
func Parse(s string) (Level, bool) {
	for l := L1; l <= L4; l++ {
		if l.String() == s {
			return l, true
		}
	}
	return 0, false
}

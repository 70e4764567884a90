package upstream

import "strings"

// minRedactedKey is the shortest API key cut out of provider errors:
// shorter ones ("demo", "k") are placeholders, and replacing them would
// garble the message for nothing.
const minRedactedKey = 8 // bytes

// redactedKey stands for an API key cut out of a provider's error.
const redactedKey = "[api key]"

// withoutKey returns e with key cut out of the provider's message and the
// underlying error's text. Some OpenAI-compatible servers echo the key they
// got ("Incorrect API key provided: sk-…"), and these errors are logged
// and, by the gateway, passed on to its clients. An HTTP error body has
// the key cut out already (errorBodies); this catches the rest, such as an
// error event inside a stream.
func withoutKey(e *Error, key string) *Error {
	if e == nil || len(key) < minRedactedKey {
		return e
	}
	inErr := e.Err != nil && strings.Contains(e.Err.Error(), key)
	if !inErr && !strings.Contains(e.Message, key) {
		return e
	}
	r := *e
	r.Message = strings.ReplaceAll(e.Message, key, redactedKey)
	if inErr {
		r.Err = redactedError{err: e.Err, key: key}
	}
	return &r
}

// redactedError is an error whose text has an API key cut out; errors.Is
// and errors.As still reach the original.
type redactedError struct {
	err error
	key string
}

func (r redactedError) Error() string { return strings.ReplaceAll(r.err.Error(), r.key, redactedKey) }
func (r redactedError) Unwrap() error { return r.err }

package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
)

// maxJSONBody bounds JSON request bodies.
const maxJSONBody = 8 << 20 // bytes

// readJSON decodes r's body into v, reading it to the end so that the
// server notices when the client goes away. On failure it returns the
// OpenAI error to answer with. Control commands are strict (unknown fields are an error, so a typo in
// a fault is not silently ignored); OpenAI requests are not.
func readJSON(w http.ResponseWriter, r *http.Request, v any, strict bool) (*apiError, int) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			e := badRequest(fmt.Sprintf("Request body too large: the limit is %d bytes.", maxJSONBody), "")
			return &e, http.StatusRequestEntityTooLarge
		}
		e := badRequest("We could not read the body of your request.", "")
		return &e, http.StatusBadRequest
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		if strict {
			e := badRequest(fmt.Sprintf("vendorsim: bad command: %v", err), "")
			return &e, http.StatusBadRequest
		}
		e := badRequest("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", "")
		return &e, http.StatusBadRequest
	}
	return nil, 0
}

// modelOf is the model a request is for: the Azure deployment in the
// path, else the body's model.
func modelOf(r *http.Request, bodyModel string) string {
	if d := r.PathValue("deployment"); d != "" {
		return d
	}
	return bodyModel
}

// setRequestID sets the x-request-id header OpenAI sends on every answer.
func setRequestID(w http.ResponseWriter) {
	w.Header().Set("X-Request-Id", newID("req_"))
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// idLength is the length of the random part of OpenAI ids.
const idLength = 29

// newID returns prefix and random characters, shaped like OpenAI's ids.
func newID(prefix string) string {
	b := make([]byte, idLength)
	for i := range b {
		b[i] = idAlphabet[rand.IntN(len(idAlphabet))]
	}
	return prefix + string(b)
}

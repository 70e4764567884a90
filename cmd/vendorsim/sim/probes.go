package sim

import (
	"net/http"
	"slices"
)

// defaultModels are listed by /v1/models besides the models seen or
// configured.
var defaultModels = []string{
	"gpt-4o", "gpt-4o-mini", "gpt-4o-mini-transcribe", "qwen2.5-7b-instruct",
	"text-embedding-3-small", "whisper-1",
}

// modelCreated is the "created" time listed for every model.
const modelCreated = 1715367049 // unix seconds

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func newModelObject(id string) modelObject {
	return modelObject{ID: id, Object: "model", Created: modelCreated, OwnedBy: "vendorsim"}
}

// probe counts a health probe of model ("" when the probe named none).
func (s *Server) probe(model string) {
	s.count(model, Counters{Probes: 1})
}

// handleHealth serves llama.cpp's (and whisper.cpp's) GET /health:
// 200 {"status":"ok"}, or 503 when ?model= (or AnyModel) has HealthDown.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	model := r.URL.Query().Get("model")
	s.probe(model)
	switch {
	case !s.healthDown(model):
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case model == WhisperModel:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": whisperLoading})
	default:
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{
			"error": map[string]any{"code": http.StatusServiceUnavailable, "message": "Loading model", "type": "unavailable_error"},
		})
	}
}

// handleModels serves GET /v1/models: the default models and those seen
// or configured, sorted, without models whose fault is a 404. It
// answers 503 when AnyModel (or ?model=) has HealthDown.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	setRequestID(w)
	model := r.URL.Query().Get("model")
	s.probe(model)
	if s.healthDown(model) {
		writeAPIError(w, http.StatusServiceUnavailable, faultError(model, http.StatusServiceUnavailable, "", 0))
		return
	}
	known := s.configuredModels()
	for _, m := range defaultModels {
		known[m] = struct{}{}
	}
	ids := make([]string, 0, len(known))
	for m := range known {
		if m != WhisperModel && !s.missing(m) {
			ids = append(ids, m)
		}
	}
	slices.Sort(ids)
	data := make([]modelObject, len(ids))
	for i, id := range ids {
		data[i] = newModelObject(id)
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// handleModel serves GET /v1/models/{model}, counted as a probe of model.
func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	setRequestID(w)
	model := r.PathValue("model")
	s.probe(model)
	switch {
	case s.healthDown(model):
		writeAPIError(w, http.StatusServiceUnavailable, faultError(model, http.StatusServiceUnavailable, "", 0))
	case s.missing(model):
		writeAPIError(w, http.StatusNotFound, faultError(model, http.StatusNotFound, "model_not_found", 0))
	default:
		writeJSON(w, http.StatusOK, newModelObject(model))
	}
}

// missing reports whether model's fault says it does not exist.
func (s *Server) missing(model string) bool {
	f := s.peekFault(model)
	return f.Status == http.StatusNotFound || f.Code == "model_not_found"
}

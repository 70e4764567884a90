package sim

import (
	"net/http"
)

// FaultCommand is the body of POST /_sim/faults.
type FaultCommand struct {
	Model string `json:"model"`
	Fault Fault  `json:"fault"`
}

// ReplyCommand is the body of POST /_sim/reply.
type ReplyCommand struct {
	Model string `json:"model"`
	Text  string `json:"text"` // empty restores the default reply
}

// handleListFaults serves GET /_sim/faults: {"<model>": {fault}, ...}.
func (s *Server) handleListFaults(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Faults())
}

// handleSetFault serves POST /_sim/faults {"model":..., "fault":{...}}
// and answers with the command it applied.
func (s *Server) handleSetFault(w http.ResponseWriter, r *http.Request) {
	var cmd FaultCommand
	if apiErr, status := readJSON(w, r, &cmd, true); apiErr != nil {
		writeAPIError(w, status, *apiErr)
		return
	}
	if cmd.Model == "" {
		writeAPIError(w, http.StatusBadRequest, badRequest(`"model" is required ("*" for every model)`, "model"))
		return
	}
	s.SetFault(cmd.Model, cmd.Fault)
	writeJSON(w, http.StatusOK, cmd)
}

// handleClearFaults serves DELETE /_sim/faults: every fault, or only
// ?model='s.
func (s *Server) handleClearFaults(w http.ResponseWriter, r *http.Request) {
	if model := r.URL.Query().Get("model"); model != "" {
		s.SetFault(model, Fault{})
	} else {
		s.ClearFaults()
	}
	writeJSON(w, http.StatusOK, s.Faults())
}

// handleCounters serves GET /_sim/counters?model=M (AnyModel: the sum);
// without a model, every model's counters by name.
func (s *Server) handleCounters(w http.ResponseWriter, r *http.Request) {
	if !r.URL.Query().Has("model") {
		writeJSON(w, http.StatusOK, s.AllCounters())
		return
	}
	writeJSON(w, http.StatusOK, s.Counters(r.URL.Query().Get("model")))
}

// handleReset serves POST /_sim/reset: clears faults and counters and
// restarts the transcript script.
func (s *Server) handleReset(w http.ResponseWriter, _ *http.Request) {
	s.Reset()
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleSetReply serves POST /_sim/reply {"model":..., "text":...}.
func (s *Server) handleSetReply(w http.ResponseWriter, r *http.Request) {
	var cmd ReplyCommand
	if apiErr, status := readJSON(w, r, &cmd, true); apiErr != nil {
		writeAPIError(w, status, *apiErr)
		return
	}
	if cmd.Model == "" {
		writeAPIError(w, http.StatusBadRequest, badRequest(`"model" is required`, "model"))
		return
	}
	s.SetReply(cmd.Model, cmd.Text)
	writeJSON(w, http.StatusOK, cmd)
}

// Reset clears every fault and counter (requests in flight stay counted as
// such) and restarts the transcript script from its first text.
func (s *Server) Reset() {
	s.ClearFaults()
	s.resetCounters()
	s.mu.Lock()
	s.nextTranscript = 0
	s.mu.Unlock()
}

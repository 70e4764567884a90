package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/poise-dev/poise/tiers/upstream"
)

// chatRequest is what the gateway reads of a client's chat request; every
// other field goes upstream unchanged.
type chatRequest struct {
	fields        map[string]json.RawMessage // the body without "fallbacks"
	model         string
	fallbacks     []string
	stream        bool
	includeUsage  bool // the client asked for the usage chunk
	n             int  // choices asked for (default 1)
	messages      []json.RawMessage
	streamOptions json.RawMessage // the client's stream_options with include_usage set
}

// parseChatRequest reads a chat request body; the error is the client's.
func parseChatRequest(body []byte) (*chatRequest, *gatewayError) {
	bad := func(param, format string, args ...any) *gatewayError {
		return &gatewayError{Message: fmt.Sprintf(format, args...), Type: typeInvalidRequest, Param: param}
	}
	rq := &chatRequest{n: 1}
	if err := json.Unmarshal(body, &rq.fields); err != nil || rq.fields == nil {
		return nil, bad("", "the body must be a JSON object")
	}
	if err := json.Unmarshal(rq.fields["model"], &rq.model); err != nil || strings.TrimSpace(rq.model) == "" {
		return nil, bad("model", "you must provide a model parameter")
	}
	if err := json.Unmarshal(rq.fields["messages"], &rq.messages); err != nil || len(rq.messages) == 0 {
		return nil, bad("messages", "messages must be a non-empty array")
	}
	if raw, ok := rq.fields["stream"]; ok && json.Unmarshal(raw, &rq.stream) != nil && string(raw) != "null" {
		return nil, bad("stream", "stream must be a boolean")
	}
	if raw, ok := rq.fields["n"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &rq.n) != nil || rq.n < 1 {
			return nil, bad("n", "n must be a positive integer")
		}
	}
	if raw, ok := rq.fields["fallbacks"]; ok {
		if json.Unmarshal(raw, &rq.fallbacks) != nil {
			return nil, bad("fallbacks", "fallbacks must be an array of model names")
		}
		if len(rq.fallbacks) > maxRequestFallbacks {
			return nil, bad("fallbacks", "at most %d fallbacks, got %d", maxRequestFallbacks, len(rq.fallbacks))
		}
		delete(rq.fields, "fallbacks")
	}
	opts := map[string]json.RawMessage{}
	if raw, ok := rq.fields["stream_options"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &opts) != nil {
			return nil, bad("stream_options", "stream_options must be an object")
		}
		var inc bool
		_ = json.Unmarshal(opts["include_usage"], &inc)
		rq.includeUsage = inc
	}
	// Always ask for usage upstream: the gateway accounts for tokens and
	// answers non-streaming clients with usage.
	opts["include_usage"] = json.RawMessage("true")
	rq.streamOptions, _ = json.Marshal(opts) // cannot fail: raw values that parsed
	return rq, nil
}

// upstreamBody is the request for one attempt: the client's fields with
// model, a stream with usage, and, to continue a cut answer, the partial
// answer as a trailing assistant message (with the flags vLLM needs to
// continue it rather than start a new message).
func (rq *chatRequest) upstreamBody(model, prefill string) ([]byte, error) {
	f := maps.Clone(rq.fields)
	m, _ := json.Marshal(model) // cannot fail: a string
	f["model"] = m
	f["stream"] = json.RawMessage("true")
	f["stream_options"] = rq.streamOptions
	if prefill != "" {
		assistant, _ := json.Marshal(map[string]string{"role": "assistant", "content": prefill}) // cannot fail
		msgs, err := json.Marshal(append(rq.messages[:len(rq.messages):len(rq.messages)], assistant))
		if err != nil {
			return nil, fmt.Errorf("tiers: gateway: prefill: %w", err)
		}
		f["messages"] = msgs
		f["continue_final_message"] = json.RawMessage("true")
		f["add_generation_prompt"] = json.RawMessage("false")
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("tiers: gateway: request body: %w", err)
	}
	return b, nil
}

// promptTokens estimates the prompt's tokens from every message.
func (rq *chatRequest) promptTokens() int {
	n := 0
	for _, raw := range rq.messages {
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(raw, &msg)
		n += upstream.MessageTokens(msg.Content)
	}
	return n
}

// target is one endpoint and upstream model to try.
type target struct {
	ep     Endpoint // the chain entry, with its model for this request
	client *upstream.Client
	chain  string // the model name whose chain listed it
}

// key identifies the endpoint and model, for de-duplication and cooldowns.
func (t target) key() string { return t.ep.Name + "\x00" + t.ep.Model }

// targets lists what rq may be sent to, in order: the chain of its model
// and the chains of that model's configured fallbacks (depth first), then
// the same for each of the request's own fallbacks. Each endpoint and
// model pair appears once; a model already expanded is not expanded again,
// so fallbacks cannot loop.
func (g *Handler) targets(rq *chatRequest) ([]target, int, *gatewayError) {
	if !g.plan.cfg.serves(rq.model) {
		return nil, http.StatusNotFound, &gatewayError{Message: fmt.Sprintf("The model `%s` does not exist: no gateway chain serves it.", rq.model),
			Type: typeInvalidRequest, Param: "model", Code: "model_not_found"}
	}
	for i, f := range rq.fallbacks {
		if !g.plan.cfg.serves(f) {
			return nil, http.StatusBadRequest, &gatewayError{Message: fmt.Sprintf("fallbacks[%d]: no gateway chain serves model %q", i, f),
				Type: typeInvalidRequest, Param: "fallbacks", Code: "model_not_found"}
		}
	}
	var (
		out      []target
		expanded = map[string]bool{}
		seen     = map[string]bool{}
	)
	var expand func(model string)
	expand = func(model string) {
		if expanded[model] {
			return
		}
		expanded[model] = true
		chain, _ := g.plan.chain(model)
		for _, e := range chain {
			e.Model = strings.ReplaceAll(e.Model, modelPlaceholder, model)
			e.LargerModel = strings.ReplaceAll(e.LargerModel, modelPlaceholder, model)
			t := target{ep: e, client: g.clients[e.Name], chain: model}
			if !seen[t.key()] {
				seen[t.key()] = true
				out = append(out, t)
			}
		}
		for _, f := range g.plan.cfg.Fallbacks[model] {
			expand(f)
		}
	}
	expand(rq.model)
	for _, f := range rq.fallbacks {
		expand(f)
	}
	return out, 0, nil
}

package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/poise-dev/poise/tiers/upstream"
)

// chatRequest is what the gateway reads of a client's chat request; every
// other field goes upstream unchanged. The body is decoded once, into
// fields; nothing else keeps a copy of it.
type chatRequest struct {
	fields        map[string]json.RawMessage // the body without "fallbacks"
	size          int                        // bytes of the body
	model         string
	fallbacks     []string
	stream        bool
	includeUsage  bool            // the client asked for the usage chunk
	n             int             // choices asked for (default 1)
	streamOptions json.RawMessage // the client's stream_options with include_usage set
}

// parseChatRequest reads a chat request body; the error is the client's.
func parseChatRequest(body []byte) (*chatRequest, *gatewayError) {
	bad := func(param, format string, args ...any) *gatewayError {
		return &gatewayError{Message: fmt.Sprintf(format, args...), Type: typeInvalidRequest, Param: param}
	}
	rq := &chatRequest{n: 1, size: len(body)}
	if err := json.Unmarshal(body, &rq.fields); err != nil || rq.fields == nil {
		return nil, bad("", "the body must be a JSON object")
	}
	if err := json.Unmarshal(rq.fields["model"], &rq.model); err != nil || strings.TrimSpace(rq.model) == "" {
		return nil, bad("model", "you must provide a model parameter")
	}
	if !nonEmptyArray(rq.fields["messages"]) {
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

// nonEmptyArray reports whether raw (valid JSON) is an array with at least
// one element, without copying it.
func nonEmptyArray(raw json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	return err == nil && t == json.Delim('[') && dec.More()
}

// Fields the gateway sets on every upstream request, or on a continuation.
var ownFields = map[string]bool{"model": true, "stream": true, "stream_options": true,
	"continue_final_message": true, "add_generation_prompt": true}

// upstreamBody is the request for one attempt: the client's fields with
// model, a stream with usage, and, to continue a cut answer, the partial
// answer as a trailing assistant message (with the flags vLLM needs to
// continue it rather than start a new message). It is written in one
// buffer, the client's fields as they came.
func (rq *chatRequest) upstreamBody(model, prefill string) []byte {
	b := make([]byte, 0, rq.size+len(model)+len(prefill)+256)
	b = append(b, '{')
	field := func(k string, v []byte) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(k) // cannot fail: a string
		b = append(append(append(b, key...), ':'), v...)
	}
	for k, v := range rq.fields {
		if !ownFields[k] && (k != "messages" || prefill == "") {
			field(k, v)
		}
	}
	m, _ := json.Marshal(model) // cannot fail: a string
	field("model", m)
	field("stream", []byte("true"))
	field("stream_options", rq.streamOptions)
	if prefill != "" {
		msgs := bytes.TrimRight(rq.fields["messages"], " \t\r\n")
		assistant, _ := json.Marshal(map[string]string{"role": "assistant", "content": prefill}) // cannot fail
		field("messages", append(append(append(slices.Clip(msgs[:len(msgs)-1]), ','), assistant...), ']'))
		field("continue_final_message", []byte("true"))
		field("add_generation_prompt", []byte("false"))
	} else if v, ok := rq.fields["continue_final_message"]; ok {
		field("continue_final_message", v)
		if v, ok := rq.fields["add_generation_prompt"]; ok {
			field("add_generation_prompt", v)
		}
	} else if v, ok := rq.fields["add_generation_prompt"]; ok {
		field("add_generation_prompt", v)
	}
	return append(b, '}')
}

// promptTokens estimates the prompt's tokens from every message.
func (rq *chatRequest) promptTokens() int {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(rq.fields["messages"], &msgs)
	n := 0
	for _, m := range msgs {
		n += upstream.MessageTokens(m.Content)
	}
	return n
}

// target is one endpoint and upstream model to try.
type target struct {
	ep      Endpoint // the chain entry, with its model (and name) for this request
	client  *upstream.Client
	chain   string // the model name whose chain listed it
	circuit string // the key of its circuit (see circuitKey)
}

// circuitKey is the circuit of entry e (its name as configured, {model}
// not yet replaced) serving model from chain: the endpoint's name, shared
// with the engine's backend of that name and probed; for the "*" chain,
// one circuit per model: the name with {model} replaced when it has the
// placeholder, else name/model.
func circuitKey(chain, name, model string) string {
	switch {
	case chain != AnyModelChain:
		return name
	case strings.Contains(name, modelPlaceholder):
		return strings.ReplaceAll(name, modelPlaceholder, model)
	}
	return name + "/" + model
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
		chain, key := g.plan.chain(model)
		for _, e := range chain {
			t := target{client: g.clients[e.Name], chain: model, circuit: circuitKey(key, e.Name, model)}
			e.Name = strings.ReplaceAll(e.Name, modelPlaceholder, model)
			e.Model = strings.ReplaceAll(e.Model, modelPlaceholder, model)
			e.LargerModel = strings.ReplaceAll(e.LargerModel, modelPlaceholder, model)
			t.ep = e
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

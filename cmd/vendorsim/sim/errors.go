package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is the "error" object of an OpenAI error body. Null fields are
// written as null, as OpenAI does.
type apiError struct {
	Message    string  `json:"message"`
	Type       *string `json:"type"`
	Param      *string `json:"param"`
	Code       *string `json:"code"`
	InnerError any     `json:"innererror,omitempty"` // Azure content filter details
}

type errorBody struct {
	Error apiError `json:"error"`
}

// Error types OpenAI uses.
const (
	typeInvalidRequest = "invalid_request_error"
	typeServer         = "server_error"
	typeQuota          = "insufficient_quota"
	typeRateLimit      = "requests"
)

// defaultContextWindow is the context length quoted by
// context_length_exceeded errors.
const defaultContextWindow = 128000 // tokens

func strp(s string) *string { return &s }

// writeAPIError writes an OpenAI error body with status.
func writeAPIError(w http.ResponseWriter, status int, e apiError) {
	writeJSON(w, status, errorBody{Error: e})
}

// writeJSON writes v as an application/json body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "vendorsim: encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// badRequest is an invalid_request_error about param (empty: null).
func badRequest(message, param string) apiError {
	e := apiError{Message: message, Type: strp(typeInvalidRequest)}
	if param != "" {
		e.Param = strp(param)
	}
	return e
}

// faultError is the OpenAI error body for a fault's status and code, in
// the words the real API uses. promptTokens feeds the context-length text.
func faultError(model string, status int, code string, promptTokens int) apiError {
	if code == "" {
		code = defaultCode(status)
	}
	switch code {
	case "rate_limit_exceeded":
		return apiError{
			Message: fmt.Sprintf("Rate limit reached for %s in organization org-vendorsim on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more.", model),
			Type:    strp(typeRateLimit), Code: strp(code),
		}
	case "insufficient_quota":
		return apiError{
			Message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
			Type:    strp(typeQuota), Code: strp(code),
		}
	case "model_not_found":
		return apiError{
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model),
			Type:    strp(typeInvalidRequest), Code: strp(code),
		}
	case "context_length_exceeded":
		return apiError{
			Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", defaultContextWindow, max(promptTokens, defaultContextWindow+1)),
			Type:    strp(typeInvalidRequest), Param: strp("messages"), Code: strp(code),
		}
	case "content_filter":
		return azureContentFilterError()
	case "content_policy_violation":
		return apiError{
			Message: "Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.",
			Type:    strp(typeInvalidRequest), Code: strp(code),
		}
	case "invalid_api_key":
		return apiError{
			Message: "Incorrect API key provided: sk-sim***. You can find your API key at https://platform.openai.com/account/api-keys.",
			Type:    strp(typeInvalidRequest), Code: strp(code),
		}
	case "unsupported_country_region_territory":
		return apiError{Message: "Country, region, or territory not supported", Type: strp("request_forbidden"), Code: strp(code)}
	}
	e := apiError{Message: defaultMessage(status), Type: strp(errorType(status))}
	if code != "" {
		e.Code = strp(code)
	}
	return e
}

// defaultCode is the code OpenAI sends with status when the fault names none.
func defaultCode(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "invalid_api_key"
	case http.StatusPaymentRequired:
		return "insufficient_quota"
	case http.StatusForbidden:
		return "unsupported_country_region_territory"
	case http.StatusNotFound:
		return "model_not_found"
	case http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	}
	return "" // 400 and 5xx carry a null code
}

func errorType(status int) string {
	if status >= 500 {
		return typeServer
	}
	return typeInvalidRequest
}

func defaultMessage(status int) string {
	switch status {
	case http.StatusInternalServerError:
		return "The server had an error while processing your request. Sorry about that!"
	case http.StatusBadGateway:
		return "Bad gateway."
	case http.StatusServiceUnavailable:
		return "The engine is currently overloaded, please try again later"
	case http.StatusGatewayTimeout:
		return "Gateway timeout."
	}
	return fmt.Sprintf("%s (simulated by vendorsim)", http.StatusText(status))
}

// azureContentFilterError is Azure OpenAI's rejection of a filtered prompt.
func azureContentFilterError() apiError {
	filtered := map[string]any{"filtered": true, "severity": "high"}
	safe := map[string]any{"filtered": false, "severity": "safe"}
	return apiError{
		Message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
		Param:   strp("prompt"),
		Code:    strp("content_filter"),
		InnerError: map[string]any{
			"code": "ResponsibleAIPolicyViolation",
			"content_filter_result": map[string]any{
				"hate": safe, "self_harm": safe, "sexual": safe, "violence": filtered,
			},
		},
	}
}

// writeFault writes the fault's error response, with Retry-After when set.
func writeFault(w http.ResponseWriter, model string, f Fault, promptTokens int) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	writeAPIError(w, f.Status, faultError(model, f.Status, f.Code, promptTokens))
}

// handleNotFound answers unknown routes as OpenAI does.
func handleNotFound(w http.ResponseWriter, r *http.Request) {
	writeAPIError(w, http.StatusNotFound, badRequest(fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), ""))
}

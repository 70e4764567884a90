package sim

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"unicode"
)

const (
	defaultEmbeddingDims = 256  // dimensions when the request names none
	maxEmbeddingDims     = 8192 // dimensions
	maxEmbeddingInputs   = 2048 // inputs per request, as OpenAI allows
)

type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     *int            `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

// inputs decodes the input union: a string, strings, token ids, or
// arrays of token ids (embedded as their decimal text).
func (r *embeddingRequest) inputs() ([]string, bool) {
	var one string
	if json.Unmarshal(r.Input, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(r.Input, &many) == nil {
		return many, true
	}
	var tokens []int64
	if json.Unmarshal(r.Input, &tokens) == nil {
		return []string{fmt.Sprint(tokens)}, true
	}
	var batches [][]int64
	if json.Unmarshal(r.Input, &batches) == nil {
		out := make([]string, len(batches))
		for i, t := range batches {
			out[i] = fmt.Sprint(t)
		}
		return out, true
	}
	return nil, false
}

type embeddingData struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float64, or a base64 string of little-endian float32s
}

type embeddingResponse struct {
	Object string          `json:"object"`
	Data   []embeddingData `json:"data"`
	Model  string          `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// handleEmbeddings serves POST /v1/embeddings.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	setRequestID(w)
	var req embeddingRequest
	apiErr, status := readJSON(w, r, &req, false)
	model := modelOf(r, req.Model)
	var texts []string
	var dims int
	if apiErr == nil {
		texts, dims, apiErr = validateEmbeddings(&req, model)
		status = http.StatusBadRequest
	}
	c := s.begin(model, false)
	o := outcomeFailed // also when abortConn unwinds the handler
	defer func() { c.end(o) }()
	if apiErr != nil {
		writeAPIError(w, status, *apiErr)
		return
	}
	f := s.takeFault(model)
	tokens := 0
	for _, t := range texts {
		tokens += estimateTokens(t)
	}
	if pre, handled := s.preamble(w, r, f, 0, func() { writeFault(w, model, f, tokens) }); handled {
		o = pre
		return
	}
	resp := embeddingResponse{Object: "list", Model: model, Data: make([]embeddingData, len(texts))}
	for i, t := range texts {
		v := embed(t, dims)
		resp.Data[i] = embeddingData{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat == "base64" {
			resp.Data[i].Embedding = encodeBase64(v)
		}
	}
	resp.Usage.PromptTokens, resp.Usage.TotalTokens = tokens, tokens
	writeJSON(w, http.StatusOK, resp)
	o = outcomeCompleted
}

// validateEmbeddings checks what OpenAI would reject and returns the texts
// and the dimensions to answer with.
func validateEmbeddings(req *embeddingRequest, model string) ([]string, int, *apiError) {
	fail := func(msg, param string) ([]string, int, *apiError) {
		e := badRequest(msg, param)
		return nil, 0, &e
	}
	if model == "" {
		return fail("you must provide a model parameter", "")
	}
	texts, ok := req.inputs()
	if !ok || len(texts) == 0 || len(texts) > maxEmbeddingInputs {
		return fail("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "input")
	}
	for _, t := range texts {
		if t == "" {
			return fail("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "input")
		}
	}
	dims := defaultEmbeddingDims
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	if dims < 1 || dims > maxEmbeddingDims {
		return fail(fmt.Sprintf("Invalid 'dimensions': %d. It must be between 1 and %d.", dims, maxEmbeddingDims), "dimensions")
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64" {
		return fail(fmt.Sprintf("Invalid value: '%s'. Supported values are: 'float' and 'base64'.", req.EncodingFormat), "encoding_format")
	}
	return texts, dims, nil
}

// embed is a deterministic unit vector for text: the normalized sum of a
// pseudo-random vector per lower-cased word (and per CJK rune pair), so
// the same text always gets the same vector and texts that share words
// point the same way.
func embed(text string, dims int) []float64 {
	v := make([]float64, dims)
	features := embeddingFeatures(text)
	if len(features) == 0 {
		features = []string{text}
	}
	for _, f := range features {
		addFeature(v, f)
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] /= norm
	}
	return v
}

// embeddingFeatures are text's lower-cased words and CJK rune pairs.
func embeddingFeatures(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		runes := []rune(w)
		if !isCJK(runes[0]) {
			out = append(out, w)
			continue
		}
		for i := range runes {
			out = append(out, string(runes[i:min(i+2, len(runes))]))
		}
	}
	return out
}

// addFeature adds feature's pseudo-random vector (components in [-1, 1),
// from a splitmix64 sequence seeded by the feature's hash) to v.
func addFeature(v []float64, feature string) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(feature))
	x := h.Sum64()
	for i := range v {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		v[i] += float64(z>>11)/float64(1<<52) - 1
	}
}

// encodeBase64 is OpenAI's base64 embedding encoding: little-endian
// float32s.
func encodeBase64(v []float64) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
	}
	return base64.StdEncoding.EncodeToString(b)
}

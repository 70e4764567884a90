package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

func TestEmbeddings(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	texts := []string{
		"Tell me about a time you led a team",
		"Tell me about a time you led a team",
		"Describe a time you led a team through change",
		"What is your expected salary",
	}
	for _, format := range []openai.EmbeddingNewParamsEncodingFormat{openai.EmbeddingNewParamsEncodingFormatFloat, openai.EmbeddingNewParamsEncodingFormatBase64} {
		t.Run(string(format), func(t *testing.T) {
			resp, err := h.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
				Model:          openai.EmbeddingModelTextEmbedding3Small,
				Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
				Dimensions:     openai.Int(64),
				EncodingFormat: format,
			})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if resp.Object != "list" || resp.Model != "text-embedding-3-small" || len(resp.Data) != len(texts) || resp.Usage.PromptTokens == 0 {
				t.Fatalf("response = %+v", resp)
			}
			for i, d := range resp.Data {
				if d.Index != int64(i) || d.Object != "embedding" || len(d.Embedding) != 64 {
					t.Errorf("data[%d]: index %d object %q dims %d", i, d.Index, d.Object, len(d.Embedding))
				}
				if n := norm(d.Embedding); math.Abs(n-1) > 1e-6 {
					t.Errorf("data[%d] norm = %v", i, n)
				}
			}
			same, near, far := dot(resp.Data[0].Embedding, resp.Data[1].Embedding), dot(resp.Data[0].Embedding, resp.Data[2].Embedding), dot(resp.Data[0].Embedding, resp.Data[3].Embedding)
			if math.Abs(same-1) > 1e-6 || near <= far || near < 0.5 {
				t.Errorf("cosines: same %.3f, shared words %.3f, unrelated %.3f", same, near, far)
			}
		})
	}

	resp, err := h.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "my-embedder",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello")},
	})
	if err != nil || len(resp.Data) != 1 || len(resp.Data[0].Embedding) != defaultEmbeddingDims {
		t.Errorf("default dims: %v %+v", err, resp)
	}
}

func TestEmbeddingValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fastOptions)
	ctx := testContext(t)
	for name, body := range map[string]string{
		"empty input": `{"model":"e","input":""}`,
		"no input":    `{"model":"e"}`,
		"zero dims":   `{"model":"e","input":"x","dimensions":0}`,
		"no model":    `{"input":"x"}`,
		"bad format":  `{"model":"e","input":"x","encoding_format":"hex"}`,
	} {
		status, _, got := do(t, h.srv.Client(), jsonRequest(t, ctx, "POST", h.srv.URL+"/v1/embeddings", body))
		if status != 400 || !strings.Contains(got, "invalid_request_error") {
			t.Errorf("%s: %d %s", name, status, got)
		}
	}
	status, _, got := do(t, h.srv.Client(), jsonRequest(t, ctx, "POST", h.srv.URL+"/v1/embeddings", `{"model":"e","input":[[1,2,3],[4,5]]}`))
	if status != 200 || strings.Count(got, `"object":"embedding"`) != 2 {
		t.Errorf("token arrays: %d %s", status, got)
	}
}

func TestEmbedIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := embed("面试 经历 团队", 32), embed("面试 经历 团队", 32)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("embed is not deterministic")
		}
	}
	if n := norm(embed("!!!", 16)); math.Abs(n-1) > 1e-9 {
		t.Errorf("punctuation-only text norm = %v", n)
	}
}

func norm(v []float64) float64 { return math.Sqrt(dot(v, v)) }

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

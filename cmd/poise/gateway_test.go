package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
)

func gatewayClient(addr, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL("http://"+addr+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func gatewayParams(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me about a conflict you resolved.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
}

// TestGatewayNotConfigured: without gateway.chains both routes answer 404
// with an OpenAI error body.
func TestGatewayNotConfigured(t *testing.T) {
	t.Parallel()
	addr := startServer(t, noEnv)
	client := gatewayClient(addr, "any")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := client.Chat.Completions.New(ctx, gatewayParams("gpt-4o-mini"))
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound || ae.Code != "gateway_not_configured" {
		t.Fatalf("chat: %v", err)
	}
	if _, err := client.Models.List(ctx); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Fatalf("models: %v", err)
	}
}

// TestGatewayServedByPoise runs poise with a gateway chain of two
// simulated endpoints from a config file: the fallback answers when the
// primary fails, the client key is required, and /metrics counts it.
func TestGatewayServedByPoise(t *testing.T) {
	t.Parallel()
	primary, backup := vendorsim.New(vendorsim.Options{TokenDelay: time.Millisecond}), vendorsim.New(vendorsim.Options{TokenDelay: time.Millisecond})
	var urls []string
	for _, sim := range []*vendorsim.Server{primary, backup} {
		srv := httptest.NewServer(sim)
		t.Cleanup(func() { sim.Close(); srv.Close() })
		urls = append(urls, srv.URL+"/v1")
	}
	primary.SetFault(vendorsim.AnyModel, vendorsim.Fault{Status: http.StatusServiceUnavailable})
	cfg := fmt.Sprintf(`gateway:
  keys: ["${GATEWAY_KEY}"]
  chains:
    "*":
      - {name: primary, base_url: %s, model: "{model}"}
      - {name: backup, base_url: %s, model: backup-model}
`, urls[0], urls[1])
	path := filepath.Join(t.TempDir(), "poise.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{"GATEWAY_KEY": "sk-poise"}[k] }
	addr := startServer(t, env, "-config", path)

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	client := gatewayClient(addr, "sk-poise")
	st := client.Chat.Completions.NewStreaming(ctx, gatewayParams("gpt-4o-mini"))
	var text strings.Builder
	model := ""
	for st.Next() {
		ch := st.Current()
		if len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
			model = ch.Model
		}
	}
	if err := st.Err(); err != nil || model != "backup-model" || !strings.Contains(text.String(), "[simulated backup-model]") {
		t.Fatalf("err %v, model %q, text %q", err, model, text.String())
	}
	st.Close()

	wrong := gatewayClient(addr, "sk-wrong")
	_, err := wrong.Chat.Completions.New(ctx, gatewayParams("gpt-4o-mini"))
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v", err)
	}

	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`poise_backend_requests_total{backend="primary",class="server"} 1`,
		`poise_backend_requests_total{backend="backup",class="ok"} 1`, `poise_gateway_tokens_total{endpoint="backup",kind="completion"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestGatewayConfigErrorsNameKeyAndLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown endpoint", "gateway:\n  chains:\n    m:\n      - {name: nope, model: x}\n",
			[]string{"line 4", "gateway.chains.m[0].name", `unknown endpoint "nope"`}},
		{"fallback cycle", "gateway:\n  chains:\n    \"*\":\n      - {base_url: http://127.0.0.1:1/v1, model: \"{model}\"}\n  fallbacks:\n    a: [b]\n    b: [a]\n",
			[]string{"line 6", "cycle: a → b → a"}},
		{"unknown key", "gateway:\n  chains:\n    m:\n      - {base_url: http://127.0.0.1:1/v1, model: x, timeout: 5}\n",
			[]string{"line 4", "gateway.chains.m[0].timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tc.yaml), noEnv)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
}

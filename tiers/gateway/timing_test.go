package gateway

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// TestGatewaySlowFirstTokenFailsOverAtDefaultLimit: at the defaults, a
// primary that sends its headers at once and its first token after 20 s
// is left at the first-token limit (10 s, counted from the headers), and
// the fallback answers. Inside a synctest bubble over vendorsim's MemNet,
// so the clock is the bubble's.
func TestGatewaySlowFirstTokenFailsOverAtDefaultLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := vendorsim.NewMemNet()
		slow, fast := vendorsim.New(vendorsim.Options{TokenDelay: -1}), vendorsim.New(vendorsim.Options{TokenDelay: -1})
		slow.SetReply(modelA, replyText)
		fast.SetReply(modelB, replyB)
		slow.SetFault(modelA, vendorsim.Fault{FirstContentDelayMS: 20000})
		net.Serve("slow:80", slow)
		net.Serve("fast:80", fast)
		cfg := Config{Keys: []string{clientKey}, Chains: map[string][]Endpoint{gwModel: {
			{Endpoint: upstream.Endpoint{Name: "slow", BaseURL: "http://slow:80/v1", Model: modelA}},
			{Endpoint: upstream.Endpoint{Name: "fast", BaseURL: "http://fast:80/v1", Model: modelB}},
		}}}
		gw, err := New(cfg, nil, zerolog.Nop(), nil, WithHTTPClient(net.Client()))
		if err != nil {
			t.Fatal(err)
		}
		net.Serve("gw:80", gw)
		defer func() {
			slow.Close()
			fast.Close()
			net.Close()
		}()
		client := openai.NewClient(option.WithBaseURL("http://gw:80/v1"), option.WithAPIKey(clientKey),
			option.WithMaxRetries(0), option.WithHTTPClient(net.Client()))

		start := time.Now()
		st := client.Chat.Completions.NewStreaming(t.Context(), chatParams(gwModel))
		var text string
		var first time.Duration
		for st.Next() {
			for _, c := range st.Current().Choices {
				if c.Delta.Content != "" && text == "" {
					first = time.Since(start)
				}
				text += c.Delta.Content
			}
		}
		if err := st.Err(); err != nil || text != replyB {
			t.Fatalf("answer %q, err %v; want the fallback's", text, err)
		}
		st.Close()
		limit := time.Duration(defaultGatewayFirstTokenMS) * time.Millisecond
		if first < limit || first > limit+time.Second {
			t.Fatalf("first token after %v, want the fallback's just after the %v limit", first, limit)
		}
	})
}

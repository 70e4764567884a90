package sim

import (
	"bytes"
	"testing"
)

// TestContentTemplateMatchesMarshal checks that the precomputed content
// chunks are byte for byte the chunks json.Marshal writes.
func TestContentTemplateMatchesMarshal(t *testing.T) {
	pieces := []string{" Tell", " me", "", " \"quoted\"", " a\\b", " <b>&</b>", " 你好", " tab\there", "\u2028", "\xff bad utf-8", " vendorsim-content-mark"}
	for _, model := range []string{"gpt-4o-mini", `odd"model`, `"content":"vendorsim-content-mark"`} {
		for _, usage := range []bool{false, true} {
			a := answer{id: "chatcmpl-x1", created: 1764547200, model: model}
			tpl := a.contentTemplate(usage)
			for _, p := range pieces {
				want := a.chunk(chunkDelta{Content: &p}, nil, usage)
				if got := tpl.append(nil, p); !bytes.Equal(got, want) {
					t.Errorf("model %q usage %v piece %q:\n got %s\nwant %s", model, usage, p, got, want)
				}
			}
		}
	}
}

func BenchmarkContentChunk(b *testing.B) {
	a := answer{id: "chatcmpl-x1", created: 1764547200, model: "gpt-4o-mini"}
	piece := " disagreed"
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a.chunk(chunkDelta{Content: &piece}, nil, true)
		}
	})
	b.Run("template", func(b *testing.B) {
		tpl := a.contentTemplate(true)
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = tpl.append(buf[:0], piece)
		}
	})
}

package session

import "github.com/poise-dev/poise/tiers"

// Chip is the small "lite mode" badge the browser shows below L1: its text,
// and the hint shown on hover. The wording is that of
// docs/protocol.md (Levels and chips).
type Chip struct {
	Text string `json:"text"`
	Hint string `json:"hint"`
}

var chips = map[string]map[tiers.Level]Chip{
	"zh": {
		tiers.L2: {"⚡ 轻量模式", "主模型暂时不可用，已切换本地模型，回答可能略简洁"},
		tiers.L3: {"📋 模板模式", "已切换离线模板，建议根据自身经历调整后表述"},
		tiers.L4: {"🧭 教练模式", "AI 服务暂时不可用，已切换答题节奏指引"},
	},
	"en": {
		tiers.L2: {"⚡ Lite mode", "Main model unavailable, using the local model; answers may be briefer"},
		tiers.L3: {"📋 Template mode", "Switched to offline templates; adapt them to your own experience"},
		tiers.L4: {"🧭 Coach mode", "AI service temporarily unavailable; switched to answer-pacing guidance"},
	},
}

// chipFor returns the chip for a level in a language (en when unknown), or
// nil at L1, where no chip is shown.
func chipFor(l tiers.Level, lang string) *Chip {
	byLevel, ok := chips[lang]
	if !ok {
		byLevel = chips["en"]
	}
	c, ok := byLevel[l]
	if !ok {
		return nil
	}
	return &c
}

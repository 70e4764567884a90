// Package recall is Poise's L3: template recall. It embeds a built-in bank
// of 200 frequent interview questions (zh and en, each with spoken
// paraphrases and answers for three seniority levels) with an offline
// bilingual embedder, indexes them in chromem-go, and maps a live question
// to the nearest template when the similarity clears a threshold (0.78).
//
// Use:
//
//	bank, err := recall.Load()                       // validated at start-up
//	store, err := recall.NewStore(bank, recall.Config{}, recall.NewMetrics(reg))
//	m, err := store.Match(ctx, question, "zh", "senior")
//	if m.Hit { show(m.Answer, recall.Note("zh")) }    // else: L4 coaching
//
// The embedder needs no model weights and no network: English stems and
// stem bigrams, Chinese character n-grams and a hand-built bilingual
// lexicon of interview concepts, weighted by idf over the bank, plus one
// component that says whether the utterance asks the candidate something
// (technical knowledge questions and remarks score low). See
// DefaultThreshold for how the scale was calibrated, and eval_test.go for
// the measured accuracy.
package recall

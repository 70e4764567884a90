// Package recall is Poise's L3: template recall. It embeds a built-in bank
// of frequent interview questions (behavioural ones with answers for three
// seniority levels, technical ones with one expert answer; zh and en, each
// with spoken paraphrases and a 3-5 line outline), indexes the features of
// every wording (the offline embedder's) in a BM25 inverted index per
// language and bank kind, and maps a live question to a template only when
// the decision rule is sure.
//
// Use:
//
//	bank, err := recall.Load()                       // validated at start-up
//	store, err := recall.NewStore(bank, recall.Config{}, recall.NewMetrics(reg))
//	m, err := store.Match(ctx, question, "zh", "senior")
//	if m.Hit { show(m.Question, m.Outline, m.Answer, recall.Note("zh")) } // else: L4 coaching by m.Type
//
// The decision: coach.Classify types the utterance, and the type picks the
// templates that may answer it (a behavioural question never gets a
// technical template, a knowledge question never a story, a follow-up on
// the candidate's own project or a statement that asks a behavioural one
// too, small talk none; a text that asks nothing, by
// coach.Asks, none); a template's score is the mean of its three best
// wordings' normalised BM25 scores, read from the postings of the
// utterance's features only, and the best template is a hit when a small
// logistic model (the verifier) over its score, its lead over the next
// template, the coverage of its best-covered wording, the topic it shares
// and how specific to it the most specific shared word is gives it a
// probability of at least verifierCut's (about 0.7) of being the one
// asked; a Chinese design question must also lead by a margin. The model is fitted
// on the dev halves of testdata; the test halves are scored, never tuned
// on.
//
// The features need no model weights and no network: English stems,
// stem bigrams and character n-grams of words, Chinese character n-grams and a hand-built bilingual
// lexicon of interview concepts, weighted by idf over the bank.
package recall

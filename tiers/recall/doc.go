// Package recall is Poise's L3: template recall. It embeds a built-in bank
// of about 200 frequent interview questions (zh and en, each with spoken
// paraphrases and answers for three seniority levels) with an offline
// bilingual embedder, indexes them in chromem-go, and maps a live question
// to the nearest template when the cosine similarity clears a threshold.
package recall

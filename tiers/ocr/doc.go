// Package ocr reads the text of screenshots with Tesseract, in a bounded
// pool of subprocesses: the answer engine's Tier O (a screenshot question
// when the vision model is slow, failing or not configured) and the
// gateway's OCR fallback use it. It imports nothing of ours.
package ocr

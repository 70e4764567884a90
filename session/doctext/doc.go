// Package doctext reads a résumé or job description file (PDF, DOCX, plain
// text or Markdown) to plain text, in memory: nothing is written, logged
// or kept.
package doctext

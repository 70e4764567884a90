// Package upstream is Poise's one streaming client for OpenAI-compatible
// model servers, with the error classes that decide what a caller tries
// next, bounded error bodies and API-key redaction.
package upstream

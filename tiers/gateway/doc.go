// Package gateway serves Poise's model backends to other programs as an
// OpenAI-compatible API (/v1/chat/completions, /v1/models), with per-model
// fallback chains, retries and circuits.
package gateway

// Package vendorsim simulates Poise's model backends over their real wire
// protocols, with faults injected per model: the OpenAI HTTP API (chat
// completions with SSE streaming, embeddings, audio transcriptions, models),
// its Azure deployment routes, llama.cpp's /health, and whisper.cpp server's
// POST /inference. No model weights exist on our machines, so tests, demos
// and load runs point real clients at a Sim instead.
//
// Every model name is accepted unless a Fault says otherwise. Faults are set
// in code (SetFault) or over HTTP (POST /_sim/faults), and Counters tell what
// each model saw: how many requests completed, failed, or were abandoned by
// the client.
package vendorsim

// Package sim simulates Poise's model backends over their real wire
// protocols, with faults injected per model. No model weights exist on our
// machines, so tests, demos and load runs point real clients (openai-go,
// the whisper.cpp client) at a Server.
//
// Vendor endpoints (any model name is accepted unless a Fault says
// otherwise; /v1 may be left out, as llama.cpp allows):
//
//	POST /v1/chat/completions        OpenAI chat, JSON or SSE (stream, stream_options.include_usage,
//	                                 max_tokens / max_completion_tokens, assistant prefill)
//	POST /v1/embeddings              deterministic unit vectors; dimensions (default 256); float or base64
//	POST /v1/audio/transcriptions    multipart; json, text, verbose_json, srt, vtt
//	GET  /v1/models, /v1/models/{id} model list and lookup (counted as probes)
//	POST /openai/deployments/{d}/... the Azure OpenAI routes of the three above; {d} is the model
//	POST /inference                  whisper.cpp server: multipart "file" (16 kHz 16-bit WAV),
//	                                 response_format json|text|verbose_json|srt|vtt; faults under "whisper"
//	GET  /health[?model=M]           llama.cpp / whisper.cpp health (counted as a probe of M)
//
// Transcriptions (both routes) return Options.Transcripts in turn; without
// a script, an interviewer line chosen by a hash of the clip's audio, in
// the request's language, starting with SimulatedMark. Chat replies are
// made of the simulator's own phrases, shaped by the question's kind
// (story, technical, pitch, motivation, weakness) and marked
// "[simulated <model>]"; they never quote the prompt.
//
// Control endpoints, for tests in other processes, the -demo ops page and
// load scripts:
//
//	POST   /_sim/faults    {"model":"gpt-4o-mini","fault":{...}} sets a model's Fault ("*": every model)
//	GET    /_sim/faults    {"<model>":{fault},...}
//	DELETE /_sim/faults    clears every fault, or only ?model=M's
//	GET    /_sim/counters  ?model=M: that model's Counters ("*": the sum); none: all, by model
//	POST   /_sim/reply     {"model":"m","text":"..."} sets what m answers ("" restores the default)
//	POST   /_sim/reset     clears faults and counters
//
// Every model request ends as exactly one of Completed, Cancelled (the
// client went away) or Failed; WaitFor lets a test wait for that without
// sleeping.
package sim

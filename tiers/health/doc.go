// Package health is the health center: one circuit per backend (L1
// vendor, local model, template store, whisper server, cloud STT,
// gateway endpoint), fed by probes and by reports from live traffic; the
// answer levels derived from them; and the sharing of the circuits
// between nodes through a Store. It knows backends and levels, not the
// engine or the gateway.
//
// # Circuits
//
// A circuit is closed, open or half-open. Closed: traffic flows, and it
// opens after N failures (live or probe) within a window, or N in a row:
// l1.down_after in l1.down_window_ms for an L1 vendor, l2.fail_after in
// l2.fail_window_ms for the local model, one failure for the template
// store, 3 in a minute for a backend of no level. A live success clears
// the count; a probe pass does not. Open: no live traffic until a
// cooldown ends (2 s, doubling after each failed trial, capped at
// health.interval_ms). Then the circuit turns half-open and admits one
// trial at a time: a probe, or (for a caller of Allow) one live request.
// health.recover_after consecutive passing trials close it; any failure
// reopens it. A trial is matched by generation, and a probe pass never
// counts when a failure was seen after the probe started.
//
// # Levels
//
// A level is down when none of its backends' circuits is closed, and up
// again as soon as one is; subscribers get level.DownEvent(l) or
// level.Recovered, and read Supported for the truth.
//
// # The request path
//
// Nothing a request calls waits for health or for Redis:
//
//   - Allow(backend) bool: may a live request go there now? Closed: yes.
//     Open: no until the cooldown is over, then yes once (the circuit
//     turns half-open and this request is its trial). Half-open: yes for
//     one request at a time. The caller that got yes must Report the
//     request's end; a trial with no report counts as failed after 30 s.
//     It takes the Center's mutex for a map lookup, no I/O.
//   - Report(backend, ok, class): the end of a live request. ok is a
//     success; otherwise class is its upstream error class, and classes
//     that do not count against health (bad_request, refused,
//     context_length, our own cancel) are ignored. It is a non-blocking
//     send on a bounded queue to the health goroutine; a full queue drops
//     the report and counts it in poise_health_reports_dropped_total.
//     ReportSuccess and ReportResult are shorthands of it.
//   - BackendUp(backend), Circuit(backend), Down(level), Supported(),
//     Backends(): reads of memory.
//
// The engine reports through Report and skips levels that are Down (it
// does not call Allow: for sessions the trials are probes). The gateway
// calls Allow before each attempt on an endpoint and Report after it,
// so its half-open trials are live requests.
//
// # Sharing
//
// The sync goroutine merges every circuit with the Store (Redis:
// poise:health:{backend}) on each change and every half interval (at
// most 5 s): the record whose circuit changed last wins, so two nodes
// agree within one probe interval. While the store fails, each node
// judges alone and shares again when it answers.
package health

// Package access holds Poise's HTTP access rules: which requests count as
// coming from a client on this host (Local), what a request served
// without a credential must also show (Trust: its Host, its site), and
// how failed credentials are throttled per address (Failures).
package access

// Package access holds Poise's HTTP access rules: which requests count as
// coming from a client on this host.
package access

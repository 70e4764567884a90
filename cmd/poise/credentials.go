package main

import (
	"fmt"
	"time"

	"github.com/poise-dev/poise/session"
	"github.com/rs/zerolog"
)

// minSecretBytes is the shortest auth.secret accepted, and the length
// under which ops.token draws a warning: a session token is an HMAC of
// auth.secret that every candidate holds, so a short secret can be
// guessed offline from any one of them.
const minSecretBytes = 32

// checkSecret refuses a set but short auth.secret (serve and token issue).
func checkSecret(cfg config) error {
	if n := len(cfg.Auth.Secret); n > 0 && n < minSecretBytes {
		return fmt.Errorf("auth.secret is %d bytes, at least %d are needed: a short secret can be guessed offline from "+
			"any session token; generate one with `openssl rand -base64 32`", n, minSecretBytes)
	}
	return nil
}

// maxTokenTTL is auth.max_ttl_ms as a duration, with its default.
func maxTokenTTL(cfg config) time.Duration {
	if cfg.Auth.MaxTTLms > 0 {
		return time.Duration(cfg.Auth.MaxTTLms) * time.Millisecond
	}
	return session.DefaultMaxTTL
}

// localTrustWarning is logged whenever something is served without a
// credential: local trust is meant for one person's own machine.
const localTrustWarning = "served without a credential to clients on this host only; meant for one person's laptop: " +
	"anything that forwards TCP to this port (socat, ssh -L, a stream proxy) makes its remote clients look local"

// logAccess says, right after the listening line, who may open sessions,
// reach the ops endpoints and use the gateway; what runs without a
// credential is a warning.
func logAccess(log zerolog.Logger, cfg config, f serveFlags) {
	switch {
	case cfg.Auth.Secret != "":
		log.Info().Str("sessions", "token").Msg("sessions need a token signed with auth.secret (poise token issue)")
	case f.insecure:
		log.Warn().Str("sessions", "anonymous").Msg("-insecure: auth.secret is empty and sessions are anonymous from any address; " +
			"anyone who reaches this server can spend its vendor budget")
	default:
		log.Warn().Str("sessions", "anonymous-local").Msg("auth.secret is empty: sessions are anonymous, " + localTrustWarning)
	}
	switch n := len(cfg.Ops.Token); {
	case n == 0:
		log.Warn().Str("ops", "local").Msg("ops.token is empty: ops endpoints (/ops, /ops/api, /metrics) are " + localTrustWarning)
	case n < minSecretBytes:
		log.Warn().Str("ops", "token").Int("bytes", n).Msg(fmt.Sprintf("ops.token is short (under %d bytes): "+
			"use a long random one (openssl rand -base64 32)", minSecretBytes))
	default:
		log.Info().Str("ops", "token").Msg("ops endpoints (/ops, /ops/api, /metrics) need ops.token")
	}
	if len(cfg.Gateway.Chains) > 0 && len(cfg.Gateway.Keys) == 0 {
		log.Warn().Str("gateway", "local").Msg("gateway.keys is empty: the gateway (/v1) is " + localTrustWarning)
	}
}

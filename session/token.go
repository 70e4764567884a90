package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Session tokens are
//
//	"v1." + base64url(payload) + "." + base64url(HMAC-SHA256(secret, "v1." + base64url(payload)))
//
// where payload is the JSON object {"sub": subject, "exp": unix seconds}
// and base64url is RFC 4648 §5 without padding. Any backend holding
// auth.secret can mint them the same way (README, "Authentication").

const tokenPrefix = "v1."

// Why VerifyToken refused a token; the hub sends the message to the client.
var (
	ErrTokenMissing   = errors.New("a session token is required")
	ErrTokenMalformed = errors.New("malformed session token")
	ErrTokenForged    = errors.New("session token signature does not match")
	ErrTokenExpired   = errors.New("session token expired")
)

type tokenPayload struct {
	Sub string `json:"sub"`
	Exp int64  `json:"exp"` // unix seconds
}

// IssueToken returns a session token for subject that expires after ttl.
func IssueToken(secret, subject string, ttl time.Duration, now time.Time) (string, error) {
	if secret == "" {
		return "", errors.New("session: token: auth.secret is empty")
	}
	if subject == "" || ttl <= 0 {
		return "", errors.New("session: token: subject and a positive ttl are required")
	}
	p, _ := json.Marshal(tokenPayload{Sub: subject, Exp: now.Add(ttl).Unix()})
	body := tokenPrefix + base64.RawURLEncoding.EncodeToString(p)
	return body + "." + base64.RawURLEncoding.EncodeToString(sign(secret, body)), nil
}

// VerifyToken checks a token's signature (in constant time) and expiry and
// returns its subject. The error is one of ErrTokenMissing,
// ErrTokenMalformed, ErrTokenForged or ErrTokenExpired.
func VerifyToken(secret, token string, now time.Time) (string, error) {
	if token == "" {
		return "", ErrTokenMissing
	}
	i := strings.LastIndexByte(token, '.')
	if secret == "" || i < len(tokenPrefix) || !strings.HasPrefix(token, tokenPrefix) {
		return "", ErrTokenMalformed
	}
	mac, err := base64.RawURLEncoding.DecodeString(token[i+1:])
	if err != nil || len(mac) != sha256.Size {
		return "", ErrTokenMalformed
	}
	if !hmac.Equal(mac, sign(secret, token[:i])) {
		return "", ErrTokenForged
	}
	raw, err := base64.RawURLEncoding.DecodeString(token[len(tokenPrefix):i])
	var p tokenPayload
	if err != nil || json.Unmarshal(raw, &p) != nil || p.Sub == "" {
		return "", ErrTokenMalformed
	}
	if now.Unix() >= p.Exp {
		return "", ErrTokenExpired
	}
	return p.Sub, nil
}

func sign(secret, body string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return m.Sum(nil)
}

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
	ErrTokenTooLong   = errors.New("session token lifetime is over the server's auth.max_ttl_ms")
)

// DefaultMaxTTL bounds how far in the future a token's exp may lie when
// no other bound is given: a token minted for longer is refused, so that
// a leaked one cannot be used for ever.
const DefaultMaxTTL = 24 * time.Hour

// b64 is the one accepted spelling of each token part: base64url without
// padding, and with no stray bits in the last character (Strict).
var b64 = base64.RawURLEncoding.Strict()

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
	body := tokenPrefix + b64.EncodeToString(p)
	return body + "." + b64.EncodeToString(sign(secret, body)), nil
}

// VerifyToken checks a token's signature (in constant time), its expiry and
// that its exp is at most maxTTL after now (DefaultMaxTTL when maxTTL <= 0),
// and returns its subject. Each part must be spelled canonically: a token
// has one accepted spelling. The error is one of ErrTokenMissing,
// ErrTokenMalformed, ErrTokenForged, ErrTokenExpired or ErrTokenTooLong.
func VerifyToken(secret, token string, now time.Time, maxTTL time.Duration) (string, error) {
	if maxTTL <= 0 {
		maxTTL = DefaultMaxTTL
	}
	if token == "" {
		return "", ErrTokenMissing
	}
	i := strings.LastIndexByte(token, '.')
	if secret == "" || i < len(tokenPrefix) || !strings.HasPrefix(token, tokenPrefix) {
		return "", ErrTokenMalformed
	}
	mac, err := decodePart(token[i+1:])
	if err != nil || len(mac) != sha256.Size {
		return "", ErrTokenMalformed
	}
	if !hmac.Equal(mac, sign(secret, token[:i])) {
		return "", ErrTokenForged
	}
	raw, err := decodePart(token[len(tokenPrefix):i])
	var p tokenPayload
	if err != nil || json.Unmarshal(raw, &p) != nil || p.Sub == "" {
		return "", ErrTokenMalformed
	}
	if now.Unix() >= p.Exp {
		return "", ErrTokenExpired
	}
	if p.Exp-now.Unix() > int64(maxTTL/time.Second) { // no overflow: p.Exp > now
		return "", ErrTokenTooLong
	}
	return p.Sub, nil
}

// decodePart decodes one base64url part, refusing every spelling but the
// canonical one (Strict still skips CR and LF).
func decodePart(s string) ([]byte, error) {
	b, err := b64.DecodeString(s)
	if err == nil && b64.EncodeToString(b) != s {
		err = errors.New("session: token: non-canonical base64")
	}
	return b, err
}

func sign(secret, body string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return m.Sum(nil)
}

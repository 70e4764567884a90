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

// Session tokens are "v1.<payload>.<mac>": a base64url JSON payload
// {"sub","exp"} and its HMAC-SHA256 under auth.secret, base64url.

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
	body := "v1." + base64.RawURLEncoding.EncodeToString(p)
	return body + "." + base64.RawURLEncoding.EncodeToString(sign(secret, body)), nil
}

// VerifyToken checks a token's signature and expiry and returns its subject.
func VerifyToken(secret, token string, now time.Time) (string, error) {
	if token == "" {
		return "", errors.New("a session token is required")
	}
	i := strings.LastIndexByte(token, '.')
	if i < 0 || !strings.HasPrefix(token, "v1.") {
		return "", errors.New("malformed session token")
	}
	mac, err := base64.RawURLEncoding.DecodeString(token[i+1:])
	if err != nil || !hmac.Equal(mac, sign(secret, token[:i])) {
		return "", errors.New("session token signature does not match")
	}
	raw, err := base64.RawURLEncoding.DecodeString(token[len("v1."):i])
	var p tokenPayload
	if err != nil || json.Unmarshal(raw, &p) != nil || p.Sub == "" {
		return "", errors.New("malformed session token payload")
	}
	if now.Unix() >= p.Exp {
		return "", errors.New("session token expired")
	}
	return p.Sub, nil
}

func sign(secret, body string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return m.Sum(nil)
}

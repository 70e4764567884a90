package upstream

import (
	"net/http"

	"github.com/openai/openai-go/v3/option"
)

// inMemoryBody gives the transport a request's body as the in-memory
// reader it is. openai-go wraps every body in a reader of its own, which
// net/http cannot tell from one that may block; for such a body the
// transport writes the headers in one system call and the body in
// another (net/http's isKnownInMemoryReader). With the body as
// GetBody's bytes.Reader, a request goes out in one write and one TCP
// segment: one system call fewer per request, here and at the server.
// A request without GetBody, or whose GetBody fails, goes as it is.
func inMemoryBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.GetBody != nil && req.ContentLength > 0 {
		if b, err := req.GetBody(); err == nil {
			req.Body = b // openai-go closes its own reader after the attempt
		}
	}
	return next(req)
}

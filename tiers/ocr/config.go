package ocr

import (
	"errors"
	"fmt"
	"time"
)

// Defaults for Config; a zero field takes these.
const (
	defaultCommand    = "tesseract"
	defaultWorkers    = 2    // tesseract processes at once
	defaultQueueDepth = 8    // images waiting for a worker
	defaultTimeoutMS  = 5000 // one image, queue wait excluded
	defaultRetryMS    = 5000 // a failing OCR is skipped this long
)

// Config is the `ocr:` block of the server configuration. A zero field
// means its default, given per field.
type Config struct {
	// Command is the tesseract executable, looked up on PATH (default
	// "tesseract": Debian's tesseract-ocr with tesseract-ocr-eng and
	// tesseract-ocr-chi-sim).
	Command string `yaml:"command"`
	// Workers bounds the tesseract processes running at once (default 2;
	// each uses one core: OMP_THREAD_LIMIT=1).
	Workers int `yaml:"workers"`
	// QueueDepth bounds the images waiting for a worker (default 8); a
	// read over it fails at once with ErrBusy, it never queues longer.
	QueueDepth int `yaml:"queue_depth"`
	// TimeoutMS bounds one image once a worker has it (default 5000); the
	// process is killed when it passes.
	TimeoutMS int `yaml:"timeout_ms"`
	// RetryMS is how long OCR is skipped after two failures in a row
	// (default 5000); the first read after that tries again.
	RetryMS int `yaml:"retry_ms"`
	// Disabled turns OCR off: screenshot questions need the vision model
	// (default false).
	Disabled bool `yaml:"disabled"`
}

func (c Config) withDefaults() Config {
	if c.Command == "" {
		c.Command = defaultCommand
	}
	c.Workers = orDefault(c.Workers, defaultWorkers)
	c.QueueDepth = orDefault(c.QueueDepth, defaultQueueDepth)
	c.TimeoutMS = orDefault(c.TimeoutMS, defaultTimeoutMS)
	c.RetryMS = orDefault(c.RetryMS, defaultRetryMS)
	return c
}

// Validate reports negative values, each named by its key.
func (c Config) Validate() error {
	var errs []error
	for _, kv := range []struct {
		key string
		v   int
	}{{"ocr.workers", c.Workers}, {"ocr.queue_depth", c.QueueDepth}, {"ocr.timeout_ms", c.TimeoutMS}, {"ocr.retry_ms", c.RetryMS}} {
		if kv.v < 0 {
			errs = append(errs, fmt.Errorf("%s: must not be negative, got %d", kv.key, kv.v))
		}
	}
	return errors.Join(errs...)
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/vendorsim"
	"github.com/rs/zerolog"
)

// Models that the in-process simulator plays under -demo.
const (
	demoPrimary = "sim-primary"
	demoBackup  = "sim-backup"
	demoLocal   = "sim-local"
	demoWhisper = "whisper" // vendorsim's model name for /inference
)

// Demo faults the ops page can switch.
const (
	faultL1Down        = "l1_down"
	faultL2Slow        = "l2_slow"
	faultTemplatesDown = "templates_down"
	faultWhisperDown   = "whisper_down"
)

// demo runs vendorsim in-process as both L1 vendors, the L2 model and the
// whisper server, so that `poise -demo` shows real streaming and real
// level transitions. Its replies are simulated and marked so.
type demo struct {
	sim  *vendorsim.Sim
	srv  *http.Server
	url  string
	done chan struct{} // closed when srv.Serve returned

	mu     sync.Mutex
	faults map[string]bool // guarded by mu
	tplOff bool            // guarded by mu: the templates are "down"
}

func startDemo(log zerolog.Logger) (*demo, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	sim := vendorsim.New(vendorsim.Options{TokenDelay: 30 * time.Millisecond, FirstTokenDelay: 300 * time.Millisecond,
		InferenceDelay: 200 * time.Millisecond, Log: log})
	d := &demo{sim: sim, url: "http://" + ln.Addr().String(), done: make(chan struct{}),
		faults: map[string]bool{faultL1Down: false, faultL2Slow: false, faultTemplatesDown: false, faultWhisperDown: false}}
	d.srv = &http.Server{Handler: sim, ReadHeaderTimeout: readHeaderTimeout}
	go func() {
		defer close(d.done)
		d.srv.Serve(ln)
	}()
	log.Info().Str("vendorsim", d.url).Msg("demo: simulated vendors running in-process (simulated output, not a model's)")
	return d, nil
}

func (d *demo) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if d.srv.Shutdown(ctx) != nil {
		d.srv.Close()
	}
	d.sim.Close()
	<-d.done
}

// configure points L1, L2 and ASR at the simulator, and shortens the
// health interval so that transitions show within seconds.
func (d *demo) configure(c config) config {
	base := d.url + "/v1"
	c.Engine.L1.Vendors = []tiers.Endpoint{
		{Name: "vendor-a", BaseURL: base, APIKey: "demo", Model: demoPrimary, Prefill: true},
		{Name: "vendor-b", BaseURL: base, APIKey: "demo", Model: demoBackup, Prefill: true},
	}
	c.Engine.L2 = tiers.L2Config{Name: "local", BaseURL: base, Model: demoLocal, Prefill: true}
	if c.Engine.Health.IntervalMS == 0 {
		c.Engine.Health.IntervalMS = 2000
	}
	c.ASR.WhisperURLs = []string{d.url}
	return c
}

// wrapTemplates lets the templates_down fault fail template matches and
// their probe.
func (d *demo) wrapTemplates(t tiers.Templates, p tiers.Probe) (tiers.Templates, tiers.Probe) {
	check := p.Check
	p.Check = func(ctx context.Context) error {
		if d.templatesOff() {
			return errors.New("demo: templates switched off")
		}
		return check(ctx)
	}
	return demoTemplates{d: d, inner: t}, p
}

func (d *demo) templatesOff() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tplOff
}

type demoTemplates struct {
	d     *demo
	inner tiers.Templates
}

func (t demoTemplates) Match(ctx context.Context, text, lang, seniority string) (tiers.TemplateMatch, error) {
	if t.d.templatesOff() {
		return tiers.TemplateMatch{}, errors.New("demo: templates switched off")
	}
	return t.inner.Match(ctx, text, lang, seniority)
}

// set switches a fault on or off in the simulator.
func (d *demo) set(fault string, on bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.faults[fault]; !ok {
		return fmt.Errorf("unknown fault %q (want %s, %s, %s or %s)", fault, faultL1Down, faultL2Slow, faultTemplatesDown, faultWhisperDown)
	}
	d.faults[fault] = on
	var f vendorsim.Fault
	switch fault {
	case faultL1Down:
		if on {
			f = vendorsim.Fault{Status: 503, HealthDown: true}
		}
		d.sim.SetFault(demoPrimary, f)
		d.sim.SetFault(demoBackup, f)
	case faultL2Slow:
		if on {
			f = vendorsim.Fault{FirstTokenDelayMS: 5000, HealthDown: true}
		}
		d.sim.SetFault(demoLocal, f)
	case faultWhisperDown:
		if on {
			f = vendorsim.Fault{Status: 500}
		}
		d.sim.SetFault(demoWhisper, f)
	case faultTemplatesDown:
		d.tplOff = on
	}
	return nil
}

func (d *demo) state() map[string]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]bool, len(d.faults))
	for k, v := range d.faults {
		out[k] = v
	}
	return out
}

// demoAPI serves GET /ops/api/demo and POST /ops/api/demo/faults.
func (a *app) demoAPI(mux *http.ServeMux) {
	mux.Handle("GET /ops/api/demo", a.opsOnly(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		resp := map[string]any{"demo": a.demo != nil}
		if a.demo != nil {
			resp["faults"] = a.demo.state()
		}
		writeJSON(w, resp, nil)
	})))
	mux.Handle("POST /ops/api/demo/faults", a.opsOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.demo == nil {
			http.Error(w, "fault injection needs poise -demo", http.StatusNotFound)
			return
		}
		var req struct {
			Fault string `json:"fault"`
			On    bool   `json:"on"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
			http.Error(w, "body must be {\"fault\": NAME, \"on\": BOOL}: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := a.demo.set(req.Fault, req.On); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a.log.Info().Str("fault", req.Fault).Bool("on", req.On).Msg("demo: fault switched")
		a.health.CheckNow(r.Context())
		writeJSON(w, a.demo.state(), nil)
	})))
}

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

	vendorsim "github.com/poise-dev/poise/cmd/vendorsim/sim"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/rs/zerolog"
)

// Backends that the in-process simulators play under -demo. Each is its
// own vendorsim on its own port, as real vendors are separate hosts, so a
// fault (and a failing probe) hits one backend only.
const (
	demoVendorA = "vendor-a"
	demoVendorB = "vendor-b"
	demoLocal   = "local"
	demoWhisper = "whisper"
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
	sims map[string]*simServer

	mu     sync.Mutex
	faults map[string]bool // guarded by mu
	tplOff bool            // guarded by mu: the templates are "down"
}

// simServer is one simulator with its HTTP server.
type simServer struct {
	sim  *vendorsim.Server
	srv  *http.Server
	url  string
	done chan struct{} // closed when srv.Serve returned
}

func startDemo(log zerolog.Logger) (*demo, error) {
	d := &demo{sims: map[string]*simServer{},
		faults: map[string]bool{faultL1Down: false, faultL2Slow: false, faultTemplatesDown: false, faultWhisperDown: false}}
	opts := map[string]vendorsim.Options{
		demoVendorA: {TokenDelay: 30 * time.Millisecond, FirstTokenDelay: 300 * time.Millisecond},
		demoVendorB: {TokenDelay: 30 * time.Millisecond, FirstTokenDelay: 350 * time.Millisecond},
		demoLocal:   {TokenDelay: 40 * time.Millisecond, FirstTokenDelay: 200 * time.Millisecond},
		demoWhisper: {InferenceDelay: 200 * time.Millisecond},
	}
	for name, o := range opts {
		o.Log = log
		s, err := startSim(o)
		if err != nil {
			d.close()
			return nil, fmt.Errorf("demo: %w", err)
		}
		d.sims[name] = s
	}
	log.Info().Str("vendor-a", d.sims[demoVendorA].url).Str("vendor-b", d.sims[demoVendorB].url).
		Str("local", d.sims[demoLocal].url).Str("whisper", d.sims[demoWhisper].url).
		Msg("demo: simulated backends running in-process (their output is simulated, not a model's)")
	return d, nil
}

func startSim(o vendorsim.Options) (*simServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &simServer{sim: vendorsim.New(o), url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	s.srv = &http.Server{Handler: s.sim, ReadHeaderTimeout: readHeaderTimeout}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

func (d *demo) close() {
	for _, s := range d.sims {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if s.srv.Shutdown(ctx) != nil {
			s.srv.Close()
		}
		cancel()
		s.sim.Close()
		<-s.done
	}
}

// configure points L1, L2 and ASR at the simulators, and shortens the
// health interval so that transitions show within seconds.
func (d *demo) configure(c config) config {
	vendor := func(name, model string) upstream.Endpoint {
		return upstream.Endpoint{Name: name, BaseURL: d.sims[name].url + "/v1", APIKey: "demo", Model: model, Prefill: true}
	}
	c.Engine.L1.Vendors = []upstream.Endpoint{vendor(demoVendorA, "gpt-4o-mini"), vendor(demoVendorB, "gpt-4o")}
	c.Engine.L2 = tiers.L2Config{Name: demoLocal, BaseURL: d.sims[demoLocal].url + "/v1", Model: "qwen2.5-7b-instruct", Prefill: true}
	if c.Engine.Health.IntervalMS == 0 {
		c.Engine.Health.IntervalMS = 2000
	}
	c.ASR.WhisperURLs = []string{d.sims[demoWhisper].url}
	return c
}

// wrapTemplates lets the templates_down fault fail template matches and
// their probe.
func (d *demo) wrapTemplates(t tiers.Templates, p health.Probe) (tiers.Templates, health.Probe) {
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
		d.sims[demoVendorA].sim.SetFault(vendorsim.AnyModel, f)
		d.sims[demoVendorB].sim.SetFault(vendorsim.AnyModel, f)
	case faultL2Slow:
		if on {
			f = vendorsim.Fault{FirstTokenDelayMS: 5000, HealthDown: true}
		}
		d.sims[demoLocal].sim.SetFault(vendorsim.AnyModel, f)
	case faultWhisperDown:
		if on {
			f = vendorsim.Fault{Status: 500, HealthDown: true}
		}
		d.sims[demoWhisper].sim.SetFault(vendorsim.AnyModel, f)
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

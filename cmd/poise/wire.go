package main

import (
	"time"

	"context"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/poise-dev/poise/asr"
	"github.com/poise-dev/poise/coach"
	"github.com/poise-dev/poise/session"
	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/tiers"
	"github.com/poise-dev/poise/tiers/gateway"
	"github.com/poise-dev/poise/tiers/health"
	"github.com/poise-dev/poise/tiers/level"
	"github.com/poise-dev/poise/tiers/ocr"
	"github.com/poise-dev/poise/tiers/recall"
	"github.com/poise-dev/poise/tiers/upstream"
	"github.com/poise-dev/poise/web/access"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"
)

// app is the wired server. build creates it; close stops what build
// started, last first, and waits for it.
type app struct {
	cfg   config
	log   zerolog.Logger
	reg   *prometheus.Registry
	store session.Store // memory, or Redis when redis_url is set (redis.go)
	// resume and counters are nil (one node: sessions resume here only,
	// limits count here) unless redis_url is set (redis.go).
	resume   session.ResumeStore
	counters quota.Counters
	health   *health.Center
	hub      *session.Hub
	demo     *demo // nil unless -demo

	gw *gateway.Handler // /v1/chat/completions and /v1/models; 404 without gateway.chains

	insecure bool             // -insecure: anonymous sessions from any address
	trust    access.Trust     // what a request served without a credential must also show
	failures *access.Failures // wrong ops tokens per address (opsauth.go)

	cancel context.CancelFunc // stops background loops (health probes)
	wg     sync.WaitGroup     // background loops
	stop   []func()           // run by close, last first
}

// build wires a server on cfg: the demo's simulators with -demo, the
// template bank, Redis when redis_url is set, what answers (startEngine)
// and the sessions' hub; it logs "ready" with the level answers start at.
// On an error it has stopped what it started.
func build(cfg config, f serveFlags, log zerolog.Logger) (*app, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ctx, cancel := context.WithCancel(context.Background())
	a := &app{cfg: cfg, log: log, reg: reg, store: session.NewMemoryStore(), cancel: cancel,
		insecure: f.insecure, trust: access.NewTrust(cfg.AllowedHosts), failures: newFailures(log)}
	node := cfg.Node
	if node == "" {
		node, _ = os.Hostname()
	}

	if f.demo {
		d, err := startDemo(log)
		if err != nil {
			a.close()
			return nil, err
		}
		a.demo = d
		a.stop = append(a.stop, d.close)
		a.cfg = d.configure(a.cfg)
		cfg = a.cfg
	}

	coach.Prepare() // before the first question and the templates probe's first query
	tpl, probe, err := loadTemplates(cfg, reg)
	if err != nil {
		a.close() // the demo's servers
		return nil, err
	}
	if th := cfg.L3.Threshold; th > recall.HighThreshold {
		log.Warn().Float64("l3_threshold", th).Float64("scores_up_to", recall.HighThreshold).
			Msg("templates: l3.threshold is above the scores the built-in matcher gives; few questions will get a template (leave it out for the calibrated default)")
	}
	healthOpts := []health.Option{health.WithNode(node)}
	if cfg.RedisURL != "" {
		shared, err := a.startRedis(ctx, node, cfg.sessionConfig().ResumeWindow)
		if err != nil {
			a.close()
			return nil, err
		}
		healthOpts = append(healthOpts, shared...)
	}
	engine, err := a.startEngine(ctx, tpl, probe, healthOpts)
	if err != nil {
		a.close()
		return nil, err
	}
	a.hub = session.NewHub(a.hubConfig(f, node, engine))
	ready := log.Info().Str("answer_level", a.health.Supported().String()).Int("templates", tpl.questions).
		Int("l1_vendors", len(cfg.Engine.L1.Vendors)).Bool("l2", cfg.Engine.L2.BaseURL != "").Bool("demo", f.demo)
	if len(cfg.Engine.L1.Vendors) == 0 {
		ready = ready.Str("hint", l1Hint) // plain `poise` without OPENAI_API_KEY answers from templates only
	}
	ready.Msg("ready")
	return a, nil
}

// startEngine builds what answers, on a.cfg: the health registry over every
// backend's probe (and the embedding server's, whose template vectors it
// starts computing), the model streams' pacer, the OCR reader, the answer
// engine and the gateway; the loops it starts run until ctx is done, and
// a.close stops what it opened.
func (a *app) startEngine(ctx context.Context, tpl recallTemplates, probe health.Probe, healthOpts []health.Option) (*tiers.Engine, error) {
	cfg, log, reg := a.cfg, a.log, a.reg
	var templates tiers.Templates = tpl
	if a.demo != nil {
		templates, probe = a.demo.wrapTemplates(tpl, probe)
	}
	requests := upstream.NewMetrics(reg)
	hc := upstream.NewHTTPClient()
	a.stop = append(a.stop, hc.CloseIdleConnections)
	reader := ocr.New(cfg.OCR, log, ocr.NewMetrics(reg))
	a.stop = append(a.stop, reader.Close)
	probes := append(healthProbes(cfg, probe, hc), ocrProbe(cfg, reader)...)
	if p, ok := embeddingsProbe(tpl.store.Dense()); ok {
		probes = append(probes, p)
		a.wg.Go(func() { // computes the template vectors once per model (cached on disk)
			if err := tpl.store.PrepareDense(ctx); err != nil && ctx.Err() == nil {
				log.Warn().Err(err).Msg("templates: embedding server unusable; matching with the built-in matcher")
			}
		})
	}
	a.health = health.New(healthConfig(cfg.Engine), probes, log, health.NewMetrics(reg), healthOpts...)
	pace := pacer(cfg)
	a.wg.Go(func() { pace.Run(ctx) })
	engineOpts := []tiers.Option{tiers.WithPacer(pace)}
	if !cfg.OCR.Disabled {
		engineOpts = append(engineOpts, tiers.WithReader(reader))
	}
	engine := tiers.NewEngine(cfg.Engine, a.health, templates, log, tiers.NewMetrics(reg, requests), engineOpts...)
	var err error
	if a.gw, err = gateway.New(cfg.Gateway, gateway.HealthCircuits(a.health), log, gateway.NewMetrics(reg, requests)); err != nil {
		return nil, err
	}
	a.stop = append(a.stop, a.gw.Close)
	if !cfg.OCR.Disabled {
		a.gw.UseOCR(reader) // chains' ocr_fallback entries
	}
	a.wg.Go(func() { a.health.Run(ctx) })
	return engine, nil
}

// hubConfig is the sessions' configuration on a.cfg, with the speech
// pool it starts (a.close stops it) and the engine that answers.
func (a *app) hubConfig(f serveFlags, node string, engine *tiers.Engine) session.Config {
	asrCfg := a.cfg.ASR
	asrCfg.Circuits = asrCircuits{a.health} // whisper vs cloud by their circuits
	pool := asr.NewPool(asrCfg, a.log, asr.NewMetrics(a.reg))
	a.stop = append(a.stop, pool.Close)

	sc := a.cfg.sessionConfig()
	sc.AnonymousAnywhere = f.insecure
	sc.ASR = pool
	sc.ASRConfig = a.cfg.ASR
	sc.Node = node
	sc.Store = a.store
	sc.Resume = a.resume
	sc.Counters = a.counters
	sc.Metrics = session.NewMetrics(a.reg)
	sc.Log = a.log
	sc.Answerer = engine
	sc.Health = a.health
	return sc
}

// newFailures is the throttle of wrong ops tokens, which logs them as a
// rate: at most one line a minute, however many come.
func newFailures(log zerolog.Logger) *access.Failures {
	return &access.Failures{Report: func(n, addrs int, per time.Duration) {
		log.Warn().Int("failures", n).Int("addresses", addrs).Dur("per", per).
			Msg("wrong ops tokens (sign-in or bearer); an address is refused for a minute after " +
				strconv.Itoa(access.DefaultFailures))
	}}
}

// l1Hint is the ready line's advice when no L1 vendor is configured.
const l1Hint = "no L1 vendor: answers come from templates (L3) and the coach; set OPENAI_API_KEY or configure l1.vendors to answer at L1, or run with -demo for simulated vendors"

// close stops the background loops and what build started.
func (a *app) close() {
	a.cancel()
	a.wg.Wait()
	for i := len(a.stop) - 1; i >= 0; i-- {
		a.stop[i]()
	}
}

// recallTemplates adapts the template store to the engine's L3 seam.
type recallTemplates struct {
	store     *recall.Store
	questions int // in the bank
}

func (r recallTemplates) Match(ctx context.Context, text, lang, seniority string) (tiers.TemplateMatch, error) {
	m, err := r.store.Match(ctx, text, lang, seniority)
	if err != nil {
		return tiers.TemplateMatch{}, err
	}
	return tiers.TemplateMatch{Hit: m.Hit, Similarity: m.Similarity, ID: m.TemplateID,
		Question: m.Question, Answer: m.Answer, Outline: m.Outline, Note: recall.Note(lang)}, nil
}

// templatesProbeTimeout bounds the templates probe, an in-process query
// that fails by error, not by slowness: a CPU-starved node (a load spike,
// -race) must not read as "templates down" after half a short interval.
const templatesProbeTimeout = time.Second

// loadTemplates loads the embedded bank into the store, with its probe.
func loadTemplates(cfg config, reg prometheus.Registerer) (recallTemplates, health.Probe, error) {
	bank, err := recall.Load()
	if err != nil {
		return recallTemplates{}, health.Probe{}, fmt.Errorf("templates: %w", err)
	}
	store, err := recall.NewStore(bank, cfg.L3, recall.NewMetrics(reg))
	if err != nil {
		return recallTemplates{}, health.Probe{}, fmt.Errorf("templates: %w", err)
	}
	return recallTemplates{store, bank.Len()}, health.Probe{Name: tiers.TemplatesBackend, Level: level.L3,
		Timeout: templatesProbeTimeout, Check: store.Probe}, nil
}

// pacer spaces the engine's model streams over stream.coalesce_ms: the
// session sends a delta at most once per window anyway. Its wheel runs
// until the app's context ends (app.close waits for it).
func pacer(cfg config) *upstream.Pacer { return &upstream.Pacer{Every: cfg.window()} }

package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployConfigParses: deploy/poise.yaml, which docker-compose.yml
// gives both nodes, is a valid config once compose has set its variables
// (OPENAI_API_KEY may stay empty: L1 is then down and L2 answers).
func TestDeployConfigParses(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../deploy/poise.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"POISE_REDIS_URL": "redis://redis:6379/0", "POISE_AUTH_SECRET": "s", "POISE_OPS_TOKEN": "o",
		"POISE_L2_URL": "http://llama:8080/v1", "POISE_L2_MODEL": "local",
	}
	cfg, err := parseConfig(raw, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("deploy/poise.yaml: %v", err)
	}
	if cfg.Addr != "0.0.0.0:8080" || cfg.RedisURL != env["POISE_REDIS_URL"] || cfg.Ops.Token != "o" || cfg.Auth.Secret != "s" ||
		cfg.Engine.L2.BaseURL != env["POISE_L2_URL"] || len(cfg.ASR.WhisperURLs) != 1 {
		t.Fatalf("deploy/poise.yaml parsed as %+v", cfg)
	}
}

// TestDashboardMetricsExist: every metric the Grafana dashboard queries is
// one that Poise declares, so a renamed metric cannot leave a panel empty.
func TestDashboardMetricsExist(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../deploy/grafana/poise-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	declared := declaredMetrics(t)
	nameRE := regexp.MustCompile(`poise_[a-z0-9_]+`)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			for _, name := range nameRE.FindAllString(q.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
				if !declared[base] {
					t.Errorf("panel %q queries %s, which no package declares", p.Title, name)
				}
			}
		}
	}
}

// declaredMetrics collects the "poise_…" metric names in the Go sources.
func declaredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	re := regexp.MustCompile(`Name:\s*"(poise_[a-z0-9_]+)"`)
	for _, dir := range []string{"../../session", "../../tiers", "../../asr"} { // and their subpackages
		err := filepath.WalkDir(dir, func(f string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
				return err
			}
			src, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllSubmatch(src, -1) {
				names[string(m[1])] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %d declared metrics: %v", len(names), names)
	}
	return names
}

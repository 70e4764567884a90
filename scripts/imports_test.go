package scripts

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	module = "github.com/poise-dev/poise"
	redis  = "github.com/redis/go-redis/v9"
)

// rule forbids imports from the packages matching from to the packages
// matching to, unless the importer matches one of exceptFrom or the
// import one of exceptTo. A pattern "x/..." matches x and every package
// below it; a pattern without "/..." matches one package. Patterns are
// relative to the module unless their first element holds a dot (a
// third-party path such as redis).
type rule struct {
	from, to   string
	exceptFrom []string
	exceptTo   []string
	tests      bool   // the rule holds for the package's test imports too
	why        string // what the arrow would break
}

// rules is the import graph of docs/architecture.md ("Import arrows"),
// written as what may not happen; everything not forbidden is allowed.
// Keep the two in step.
var rules = []rule{
	// Everyone below the commands.
	{from: module + "/...", to: "cmd/...", exceptFrom: []string{"cmd/..."}, why: "commands are the top; nothing imports them"},
	{from: module + "/...", to: "cmd/...", exceptFrom: []string{"cmd/..."}, exceptTo: []string{"cmd/vendorsim/sim", "cmd/vendorsim/sim/simtest"}, tests: true,
		why: "tests import no command, only the simulator library (and its test host)"},
	{from: "cmd/vendorsim/sim/simtest", to: module + "/...", exceptTo: []string{"cmd/vendorsim/sim"}, why: "the simulator's test host serves the simulator, nothing else"},

	{from: "cmd/vendorsim/sim", to: module + "/...", why: "the simulator library serves the tests of every level; it depends on none (its own tests may drive it with the real prompt builder)"},

	// Captions.
	{from: "asr/...", to: "tiers/...", tests: true, why: "captions never depend on the answer levels"},
	{from: "asr/...", to: "session/...", tests: true, why: "the session drives the audio pipeline, not the reverse"},

	// Leaves: data and plain net/http.
	{from: "coach/...", to: module + "/...", exceptTo: []string{"coach/..."}, why: "the coach is data and a little code, with no dependency"},
	{from: "web", to: module + "/...", why: "the UI is static files and a handler"},
	{from: "web/access", to: module + "/...", why: "the access rules are plain net/http"},
	{from: "tiers/level", to: module + "/...", why: "levels and their events are a leaf everyone shares"},

	// The answer levels.
	{from: "tiers/...", to: "session/...", tests: true, why: "the engine and the gateway serve sessions; they do not know them"},
	{from: "tiers/upstream", to: "tiers", why: "the client knows no levels"},
	{from: "tiers/upstream", to: "tiers/health", why: "the client reports errors; it does not judge them"},
	{from: "tiers/upstream", to: "tiers/gateway", why: "the gateway is built on the client"},
	{from: "tiers/upstream", to: "tiers/level", why: "the client knows no levels"},
	{from: "tiers/health/...", to: "tiers", why: "health knows neither the engine ..."},
	{from: "tiers/health/...", to: "tiers/gateway/...", why: "... nor the gateway (cmd builds its probe list)"},
	{from: "tiers", to: "tiers/gateway/...", why: "the engine does not serve HTTP"},
	{from: "tiers/gateway/...", to: "tiers", why: "the gateway relays; it has no levels of its own"},
	{from: "tiers/recall/...", to: "tiers/...", exceptTo: []string{"tiers/recall/..."}, why: "recall is a leaf the engine uses"},
	{from: module + "/...", to: "tiers/level", exceptFrom: []string{"tiers", "tiers/health", "tiers/gateway", "session", "cmd/..."},
		why: "levels belong to the engine, the health center, the gateway and the session"},

	// The session and its storage.
	{from: "session/quota/...", to: "session", why: "quota is below the session"},
	{from: "session", to: "session/redisstore/...", why: "redisstore implements session's interfaces; cmd wires it"},
	{from: "session/quota/...", to: "session/redisstore/...", why: "redisstore implements quota's counters; cmd wires it"},
	{from: "tiers/health/...", to: "session/redisstore/...", why: "redisstore implements health's store; cmd wires it"},

	// One package holds Redis.
	{from: "session", to: redis, tests: true, why: "session declares its stores; one package holds Redis"},
	{from: "tiers/health", to: redis, tests: true, why: "health declares its store; session/redisstore implements it"},
	{from: module + "/...", to: redis, exceptFrom: []string{"session/redisstore/...", "tiers/redistest", "cmd/..."},
		why: "every poise:* key lives in session/redisstore (tiers/redistest only opens test databases)"},
}

// listed is what TestImports reads of `go list -json`.
type listed struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// TestImports fails when a package, or its tests, imports across a
// forbidden arrow.
func TestImports(t *testing.T) {
	t.Parallel()
	pkgs := goList(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; want the whole module", len(pkgs))
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if r, bad := forbidden(p.ImportPath, imp, false); bad {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, r.why)
			}
		}
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			if p.ImportPath == imp { // an external test package importing its own package
				continue
			}
			if r, bad := forbidden(p.ImportPath, imp, true); bad {
				t.Errorf("%s's tests import %s: %s", p.ImportPath, imp, r.why)
			}
		}
	}
	for _, p := range pkgs {
		if p.Error != nil {
			t.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
	}
}

// TestRulesBite plants each rule's arrow on a package pair that matches
// its patterns and checks that some rule catches it, so that a typo in a
// pattern cannot make a rule silently match nothing; and checks that the
// main arrows stay allowed.
func TestRulesBite(t *testing.T) {
	t.Parallel()
	for _, r := range rules {
		from, to := example(r.from), example(r.to)
		if slices.ContainsFunc(r.exceptFrom, func(p string) bool { return match(p, from) }) {
			from = module + "/asr" // the pattern's base is exempt; any non-exempt package will do
		}
		if _, bad := forbidden(from, to, r.tests); !bad {
			t.Errorf("rule %s -> %s does not catch %s -> %s", r.from, r.to, from, to)
		}
	}
	allowed := [][2]string{
		{"cmd/poise", "session"},
		{"cmd/poise", "session/redisstore"},
		{"session", "tiers"},
		{"session", "tiers/level"},
		{"tiers", "tiers/upstream"},
		{"tiers/gateway", "tiers/upstream"},
		{"tiers/gateway", "tiers/health"},
		{"tiers/health", "tiers/upstream"},
		{"tiers/health", "tiers/level"},
		{"session/redisstore", "session"},
		{"session/redisstore", redis},
	}
	for _, a := range allowed {
		from, to := example(a[0]), example(a[1])
		if r, bad := forbidden(from, to, false); bad {
			t.Errorf("%s -> %s must be allowed; rule %s -> %s forbids it", a[0], a[1], r.from, r.to)
		}
	}
	if _, bad := forbidden(module+"/asr", module+"/cmd/vendorsim/sim", true); bad {
		t.Error("tests may import the simulator library")
	}
}

// example returns the package a pattern names, or its base for "x/...".
func example(pattern string) string { return strings.TrimSuffix(full(pattern), "/...") }

// forbidden reports the first rule that forbids from importing to; test
// says whether the import is one of from's tests.
func forbidden(from, to string, test bool) (rule, bool) {
	for _, r := range rules {
		if test && !r.tests {
			continue
		}
		exempt := func(p string) bool { return match(p, from) }
		allowed := func(p string) bool { return match(p, to) }
		if match(r.from, from) && match(r.to, to) &&
			!slices.ContainsFunc(r.exceptFrom, exempt) && !slices.ContainsFunc(r.exceptTo, allowed) {
			return r, true
		}
	}
	return rule{}, false
}

// full makes a pattern absolute: module-relative unless its first
// element holds a dot.
func full(pattern string) string {
	if strings.Contains(strings.SplitN(pattern, "/", 2)[0], ".") {
		return pattern
	}
	return module + "/" + pattern
}

func match(pattern, path string) bool {
	p := full(pattern)
	if base, ok := strings.CutSuffix(p, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == p
}

// goList lists every package of the module with its imports. It lists
// broken packages too (-e), so that an import that closes a cycle is
// reported as the arrow it is; TestImports fails on their errors after.
func goList(t *testing.T) []listed {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", module+"/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

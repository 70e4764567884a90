package recall

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadFixture(t *testing.T) {
	t.Parallel()
	b := fixtureBank(t)
	if b.Len() != 3 {
		t.Fatalf("Len = %d, want 3", b.Len())
	}
	q := b.Question("strengths-01")
	if q == nil {
		t.Fatal("strengths-01 missing")
	}
	if q.Category != "strengths" || q.Wording(LangZH) != "你最大的缺点是什么？" || q.Wording("fr") != "What is your greatest weakness?" {
		t.Errorf("strengths-01 = %q %q %q", q.Category, q.ZH, q.EN)
	}
	if q.Answers.For("cto") != q.Answers.Mid || q.Answers.For(Senior) != q.Answers.Senior {
		t.Error("Answers.For: unknown seniority must mean mid")
	}
	if b.Question("nope") != nil {
		t.Error("unknown id must be nil")
	}
}

// fixtureFS returns the fixture files, with edit applied to the named file.
func fixtureFS(t *testing.T, name string, edit func(string) string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	for _, n := range []string{"intro.yaml", "strengths.yaml", "leaving.yaml"} {
		data, err := os.ReadFile("testdata/bank/" + n)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		if n == name {
			edited := edit(s)
			if edited == s {
				t.Fatalf("edit of %s changed nothing", n)
			}
			s = edited
		}
		fsys[n] = &fstest.MapFile{Data: []byte(s)}
	}
	return fsys
}

// answerOf returns the first answer line of a fixture file with the given
// level and language prefix, e.g. ("junior", "en").
func answerOf(t *testing.T, s, level, lang string) string {
	t.Helper()
	_, rest, _ := strings.Cut(s, "      "+level+":\n")
	for line := range strings.Lines(rest) {
		if strings.HasPrefix(strings.TrimSpace(line), lang+": ") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("no %s/%s answer", level, lang)
	return ""
}

func TestLoadRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		edit func(t *testing.T, s string) string
		want string
	}{
		{"unknown key", "intro.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, "    paraphrases:", "    difficulty: easy\n    paraphrases:", 1)
		}, "field difficulty not found"},
		{"second document", "intro.yaml", func(t *testing.T, s string) string {
			return s + "---\ncategory: intro\n"
		}, "more than one YAML document"},
		{"file and category differ", "intro.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, "category: intro", "category: career", 1)
		}, "belongs in career.yaml"},
		{"id of another category", "intro.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, "id: intro-01", "id: career-01", 1)
		}, "id must look like intro-01"},
		{"duplicate id", "leaving.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, "id: leaving-01", "id: intro-01", 1)
		}, `duplicate id "intro-01"`},
		{"missing canonical", "intro.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, "    en: Please introduce yourself.\n", "", 1)
		}, "question en: missing"},
		{"three paraphrases", "intro.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, `, "Give us a quick overview of your background."`, "", 1)
		}, "3 en paraphrases, want at least 4"},
		{"paraphrase repeats canonical", "intro.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, `"Who are you, in a nutshell?"`, `"please introduce YOURSELF"`, 1)
		}, "paraphrase en[2] repeats another wording"},
		{"Chinese in an English field", "intro.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, `"Who are you, in a nutshell?"`, `"你是谁？"`, 1)
		}, "paraphrase en[2]: has Chinese characters"},
		{"wording shared by two templates", "leaving.yaml", func(t *testing.T, s string) string {
			return strings.Replace(s, `"Why quit now?"`, `"Tell me a bit about yourself!"`, 1)
		}, "intro-01 and leaving-01 share the wording"},
		{"short answer", "leaving.yaml", func(t *testing.T, s string) string {
			a := answerOf(t, s, "mid", "en")
			return strings.Replace(s, a, `en: "Too short [really]."`, 1)
		}, "answer mid/en: 3 words, want 80-150"},
		{"long zh answer", "leaving.yaml", func(t *testing.T, s string) string {
			a := answerOf(t, s, "senior", "zh")
			return strings.Replace(s, a, strings.TrimSuffix(a, `"`)+strings.Repeat("长", 100)+`"`, 1)
		}, "answer senior/zh:"},
		{"no placeholder", "leaving.yaml", func(t *testing.T, s string) string {
			a := answerOf(t, s, "junior", "en")
			return strings.Replace(s, a, strings.ReplaceAll(a, "[placeholder]", "somebody"), 1)
		}, "answer junior/en: no [placeholder]"},
		{"near-duplicate answer", "leaving.yaml", func(t *testing.T, s string) string {
			junior := answerOf(t, s, "junior", "zh")
			return strings.Replace(s, answerOf(t, s, "mid", "zh"), junior, 1)
		}, "near-duplicate answers leaving-01/junior/zh and leaving-01/mid/zh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadFS(fixtureFS(t, tt.file, func(s string) string { return tt.edit(t, s) }))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadFS error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestLoadEmptyFS(t *testing.T) {
	t.Parallel()
	if _, err := LoadFS(fstest.MapFS{}); err == nil {
		t.Fatal("an empty bank must be an error")
	}
}

// fullBankSize is the number of templates the finished bank must have.
const fullBankSize = 200

// realBank loads the embedded bank. While the writers are still filling
// bank/ a local run skips; under CI=true an incomplete bank fails.
func realBank(t testing.TB) *Bank {
	t.Helper()
	return checkFull(t, Load)
}

// ownBank is realBank decoded anew, for a test that changes it.
func ownBank(t testing.TB) *Bank {
	t.Helper()
	return checkFull(t, loadEmbedded)
}

// checkFull loads the embedded bank with load and checks that it is
// complete.
func checkFull(t testing.TB, load func() (*Bank, error)) *Bank {
	t.Helper()
	b, err := load()
	if err != nil {
		t.Fatalf("embedded bank: %v", err)
	}
	if b.Len() < fullBankSize {
		msg := "embedded bank has %d templates, want at least %d"
		if os.Getenv("CI") == "true" {
			t.Fatalf(msg, b.Len(), fullBankSize)
		}
		t.Skipf(msg+" (bank still being written; CI=true fails here)", b.Len(), fullBankSize)
	}
	return b
}

// TestBankValidation is the bank validation test: the embedded bank loads
// (Load checks every entry: wordings, paraphrases, answer lengths,
// placeholders, near-duplicates), is complete, and covers every category.
func TestBankValidation(t *testing.T) {
	t.Parallel()
	b := realBank(t)
	perCategory := make(map[string]int)
	for _, q := range b.Questions {
		perCategory[q.Category]++
	}
	for _, c := range Categories {
		if perCategory[c] == 0 {
			t.Errorf("category %s has no templates", c)
		}
	}
	t.Logf("%d templates: %v", b.Len(), perCategory)
}

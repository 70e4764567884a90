package recall

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/poise-dev/poise/coach"
)

//go:embed bank/*.yaml
var bankFS embed.FS

// Languages and seniority levels of the bank, and the defaults that an
// unknown value falls back to.
const (
	LangZH = "zh"
	LangEN = "en"

	Junior = "junior"
	Mid    = "mid"
	Senior = "senior"

	defaultLang      = LangEN
	defaultSeniority = Mid
)

// Categories lists the bank's categories, one YAML file each: the
// behavioural ones, then the technical ones (TechnicalCategories).
var Categories = []string{
	"intro", "motivation", "strengths", "failure", "conflict", "teamwork",
	"leadership", "pressure", "career", "leaving", "logistics", "technical",
	"design", "concepts", "coding",
}

// Kinds of bank file. A behavioural file (no kind) answers questions about
// the candidate, with one answer per seniority level; a technical file
// ("kind: technical") answers knowledge questions, with one answer for all.
const (
	KindBehavioural = ""
	KindTechnical   = "technical"
)

// technicalTypes maps each technical category to the question types its
// templates may have.
var technicalTypes = map[string][]coach.Type{
	"design":   {coach.Design},
	"concepts": {coach.Concept},
	"coding":   {coach.Coding},
}

// behaviouralTypes are the question types a behavioural template may have;
// its default is behavioural, or logistics in the logistics category.
var behaviouralTypes = []coach.Type{coach.Behavioural, coach.Logistics}

// Text is one piece of text in both languages.
type Text struct {
	ZH string `yaml:"zh"`
	EN string `yaml:"en"`
}

// In returns the text in lang ("zh" or "en"; anything else means en).
func (t Text) In(lang string) string {
	if lang == LangZH {
		return t.ZH
	}
	return t.EN
}

// Paraphrases are spoken, informal rewordings of a question, per language.
type Paraphrases struct {
	ZH []string `yaml:"zh"`
	EN []string `yaml:"en"`
}

// In returns the paraphrases in lang ("zh" or "en"; anything else means en).
func (p Paraphrases) In(lang string) []string {
	if lang == LangZH {
		return p.ZH
	}
	return p.EN
}

// Outline is a template's spoken outline, 3-5 short lines per language,
// shown above the full answer: valid for every seniority.
type Outline struct {
	ZH []string `yaml:"zh"`
	EN []string `yaml:"en"`
}

// In returns the outline in lang ("zh" or "en"; anything else means en).
func (o Outline) In(lang string) []string {
	if lang == LangZH {
		return o.ZH
	}
	return o.EN
}

// Answers holds one answer template per seniority level.
type Answers struct {
	Junior Text `yaml:"junior"`
	Mid    Text `yaml:"mid"`
	Senior Text `yaml:"senior"`
}

// For returns the answer for seniority ("junior", "mid" or "senior";
// anything else means mid).
func (a Answers) For(seniority string) Text {
	switch seniority {
	case Junior:
		return a.Junior
	case Senior:
		return a.Senior
	default:
		return a.Mid
	}
}

// Question is one template: a canonical question, its paraphrases, its
// outline and its answers. A behavioural template has Answers (one per
// seniority), a technical one Answer (one for all); AnswerFor reads either.
type Question struct {
	ID          string      `yaml:"id"`
	Type        coach.Type  `yaml:"type"` // behavioural files: optional, see behaviouralTypes
	ZH          string      `yaml:"zh"`
	EN          string      `yaml:"en"`
	Paraphrases Paraphrases `yaml:"paraphrases"`
	Outline     Outline     `yaml:"outline"`
	Answers     Answers     `yaml:"answers"` // behavioural files
	Answer      Text        `yaml:"answer"`  // technical files

	Category string `yaml:"-"` // set from the file's category
	Kind     string `yaml:"-"` // set from the file's kind
}

// AnswerFor returns the answer at seniority ("junior", "mid" or "senior";
// anything else means mid); a technical template has one answer for all.
func (q *Question) AnswerFor(seniority string) Text {
	if q.Kind == KindTechnical {
		return q.Answer
	}
	return q.Answers.For(seniority)
}

// Wording returns the canonical question in lang (anything but "zh" is en).
func (q *Question) Wording(lang string) string {
	return Text{ZH: q.ZH, EN: q.EN}.In(lang)
}

// categoryFile is the schema of one bank/<category>.yaml file.
type categoryFile struct {
	Category  string     `yaml:"category"`
	Kind      string     `yaml:"kind"` // "" (behavioural) or "technical"
	Questions []Question `yaml:"questions"`
}

// Bank is the validated template bank. It is read-only after Load.
type Bank struct {
	Questions []*Question          // in file order, files sorted by name
	byID      map[string]*Question // Questions by ID

	wordingsOnce sync.Once // builds wordings on the first NewStore
	wordings     *wordingIndex
	wordingsErr  error
}

// Question returns the template with the given id, or nil.
func (b *Bank) Question(id string) *Question {
	return b.byID[id]
}

// Len returns the number of templates.
func (b *Bank) Len() int { return len(b.Questions) }

// Load returns the bank embedded in the binary, decoded and validated on
// the first call. Later calls return the same *Bank, which is read-only:
// every Store built on it then shares one index of its wordings, the bulk
// of start-up (BenchmarkStartup), however often a process builds one.
func Load() (*Bank, error) { return embedded() }

var embedded = sync.OnceValues(loadEmbedded)

// loadEmbedded decodes and validates the embedded bank, anew each call.
func loadEmbedded() (*Bank, error) {
	sub, err := fs.Sub(bankFS, "bank")
	if err != nil {
		return nil, fmt.Errorf("recall: bank: %w", err)
	}
	return LoadFS(sub)
}

// LoadFS decodes and validates every *.yaml file at the root of fsys as a
// bank category file; tests use it with fixtures.
func LoadFS(fsys fs.FS) (*Bank, error) {
	b, err := decodeFS(fsys)
	if err != nil {
		return nil, err
	}
	if err := validate(b); err != nil {
		return nil, fmt.Errorf("recall: bank: %w", err)
	}
	return b, nil
}

// decodeFS decodes every *.yaml file at the root of fsys as a bank
// category file, without validating the content.
func decodeFS(fsys fs.FS) (*Bank, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("recall: bank: %w", err)
	}
	if len(names) == 0 {
		return nil, errors.New("recall: bank: no *.yaml files")
	}
	slices.Sort(names)
	b := &Bank{byID: make(map[string]*Question)}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("recall: bank: %w", err)
		}
		cf, err := decodeCategory(data)
		if err != nil {
			return nil, fmt.Errorf("recall: bank: %s: %w", name, err)
		}
		if want := cf.Category + ".yaml"; path.Base(name) != want {
			return nil, fmt.Errorf("recall: bank: %s: category %q belongs in %s", name, cf.Category, want)
		}
		for i := range cf.Questions {
			q := &cf.Questions[i]
			q.Category, q.Kind = cf.Category, cf.Kind
			if q.Type == "" && q.Kind == KindBehavioural {
				q.Type = coach.Behavioural
				if q.Category == "logistics" {
					q.Type = coach.Logistics
				}
			}
			if _, dup := b.byID[q.ID]; dup {
				return nil, fmt.Errorf("recall: bank: %s: duplicate id %q", name, q.ID)
			}
			b.byID[q.ID] = q
			b.Questions = append(b.Questions, q)
		}
	}
	return b, nil
}

// decodeCategory strictly decodes one category file: unknown keys are
// errors that name the line, and a second YAML document is refused.
func decodeCategory(data []byte) (categoryFile, error) {
	var cf categoryFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cf); err != nil {
		return cf, err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return cf, errors.New("more than one YAML document")
	}
	return cf, nil
}

package coach

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// labelled is one utterance of testdata/types_dev.yaml or types_test.yaml.
type labelled struct {
	Lang string `yaml:"lang"`
	Type Type   `yaml:"type"`
	Text string `yaml:"text"`
}

func loadLabelled(t *testing.T, name string) []labelled {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var set []labelled
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&set); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return set
}

// accuracy counts correct labels per type and language.
type accuracy map[string][2]int // "all", "zh", "en", "design", "design/zh", ... → {right, of}

func (a accuracy) add(keys []string, ok bool) {
	for _, k := range keys {
		c := a[k]
		c[1]++
		if ok {
			c[0]++
		}
		a[k] = c
	}
}

func (a accuracy) frac(k string) float64 {
	if a[k][1] == 0 {
		return 0
	}
	return float64(a[k][0]) / float64(a[k][1])
}

// score classifies every utterance, logs a table per type and language
// and, with verbose, the errors (never for the test half, whose texts
// must not steer tuning), and returns the accuracy.
func score(t *testing.T, name string, verbose bool) accuracy {
	t.Helper()
	acc := accuracy{}
	for _, l := range loadLabelled(t, name) {
		got := Classify(l.Text, l.Lang)
		acc.add([]string{"all", l.Lang, string(l.Type), string(l.Type) + "/" + l.Lang}, got == l.Type)
		if verbose && got != l.Type {
			t.Logf("%s %-11s got %-11s %q", l.Lang, l.Type, got, l.Text)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%-12s %-16s %-16s %-16s\n", name, "type", "all", "zh", "en")
	cell := func(k string) string { return fmt.Sprintf("%5.1f%% (%d/%d)", 100*acc.frac(k), acc[k][0], acc[k][1]) }
	for _, ty := range append([]Type{"all"}, Types...) {
		k := string(ty)
		zh, en := k+"/zh", k+"/en"
		if ty == "all" {
			zh, en = "zh", "en"
		}
		fmt.Fprintf(&b, "%-12s %-16s %-16s %-16s\n", k, cell(k), cell(zh), cell(en))
	}
	t.Log(b.String())
	return acc
}

// checkFloors fails t for every slice below its floor.
func checkFloors(t *testing.T, acc accuracy, floors map[string]float64) {
	t.Helper()
	for k, f := range floors {
		if acc.frac(k) < f {
			t.Errorf("%s: accuracy %.1f%%, want at least %.1f%%", k, 100*acc.frac(k), 100*f)
		}
	}
}

// TestClassifyTrain measures Classify on testdata/types_train.yaml, the
// set the rules and the lexicon were trained on, and checks floors just
// under the measured figures. Since the coding and logistics rules decide
// on their own (preciseRules) it fell from 92.7% to 89.1%: the naive
// Bayes model, which learned this set, had overruled them here, and on
// the sets it never saw that did more harm than good.
func TestClassifyTrain(t *testing.T) {
	t.Parallel()
	checkFloors(t, score(t, "types_train.yaml", true), map[string]float64{
		"all": 0.89, "zh": 0.885, "en": 0.895,
	})
}

// TestClassifyDev measures Classify on testdata/types_dev.yaml, the half
// the rules were tuned on, and checks floors just under the measured
// figures. go test -run Classify -v ./coach/
func TestClassifyDev(t *testing.T) {
	t.Parallel()
	checkFloors(t, score(t, "types_dev.yaml", true), map[string]float64{
		// 95.7% (zh 96.4%, en 95.0%) since the model may not call
		// logistics a question about the candidate as a person; 95.3%
		// (en 94.2%) since the coding and logistics rules decide on
		// their own (91.8% before).
		"all": 0.95, "zh": 0.96, "en": 0.95,
	})
}

// TestClassifyTest measures Classify on testdata/types_test.yaml, never
// tuned on, scored once when the rules were final. 2026-12-03: the
// question rules of that day (a question a few words after its wh word or
// restarted mid-clause, 吗 before a comma, openers of 还是) took zh from
// 87.5% to 86.7%: one Chinese concept question the old rules did not see
// ask ("…了解吗，讲一讲") now asks, and its technical term is not in the
// lexicon, so its type fell from concept to behavioural. The lexicon was
// left as it was: the term was seen only on this half. The topic turns
// of that day (8 words, "versus" and 区别 as cues) took en from 88.4% to
// 87.5% (all 87.1%): one English item's type changed. The coding and
// logistics rules deciding on their own (the sixth session) took it to
// 88.4% (zh 87.5%, en 89.3%); the follow-up cues after them did not move it,
// nor, in the eighth session, four more technical terms and the personal
// guard on logistics (each scored once).
func TestClassifyTest(t *testing.T) {
	t.Parallel()
	checkFloors(t, score(t, "types_test.yaml", false), map[string]float64{
		"all": 0.88, "zh": 0.87, "en": 0.89,
	})
}

func TestClassifyCheap(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "?", "嗯", "\x00\xff", "How would you design a rate limiter?", "你那边能听清楚吗？"} {
		if got := Classify(text, "zh"); !containsType(got) {
			t.Errorf("Classify(%q) = %q, not a type", text, got)
		}
	}
}

func containsType(t Type) bool {
	for _, x := range Types {
		if x == t {
			return true
		}
	}
	return false
}

// BenchmarkClassify measures one classification of a long spoken question.
func BenchmarkClassify(b *testing.B) {
	const text = "OK, thanks, that's helpful. So, going back to the cache you mentioned — why Redis and not Memcached, and how did you handle invalidation?"
	for b.Loop() {
		Classify(text, "en")
	}
}

// TestClassifyAfterSmallTalk checks that a greeting or a check-in before a
// question of its own does not make the turn small talk, and that a
// second check-in after the first still does.
func TestClassifyAfterSmallTalk(t *testing.T) {
	for _, c := range []struct {
		text, lang string
		want       Type
	}{
		{"Hi, nice to meet you. Let's start, tell me about yourself.", "en", Behavioural},
		{"hi can you hear me ok great so tell me a bit about yourself", "en", Behavioural},
		{"Good morning! Okay, first one: how would you design a URL shortener?", "en", Design},
		{"喂 能听到吗 好 那我们先聊技术 进程和线程有什么区别", "zh", Concept},
		{"你好你好 不用紧张 先讲一个你最有成就感的项目", "zh", Behavioural},
		{"Hey, can you hear me? Is the video frozen?", "en", Smalltalk},
		{"Can you hear Ravi okay? His mic is a bit quiet.", "en", Smalltalk},
		{"Hi! nice to meet you, how are you", "en", Smalltalk},
		{"你好 能听到吗", "zh", Smalltalk},
		{"喂 你好 我这边有点卡 你那边网络不好吗", "zh", Smalltalk},
		// 说说你 / 先聊聊 ask after a check-in; 跟你说说 is the interviewer's own talk
		{"喂 你好 能听到吗 好 那你先说说你自己吧", "zh", Behavioural},
		{"你好你好 听得清吧 行 我们先聊聊你为什么想换工作", "zh", Behavioural},
		{"你好 我先跟你说说我们这边的情况", "zh", Smalltalk},
		// words that hold a cue's characters but mean something else
		{"信号量和互斥锁有什么区别", "zh", Concept},
		{"网络分区是什么意思", "zh", Concept},
	} {
		if got := Classify(c.text, c.lang); got != c.want {
			t.Errorf("Classify(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}

// TestTechnicalNeedsATermOrOdds: the naive Bayes model's technical
// verdict on a question that names no technical term stands only with
// odds of untermedLead over behavioural, and never when the question asks
// about the candidate in the words of behavioural interviews (personal):
// "how would you describe…" and "how would you handle…" are how design
// questions start too, and the model had learned them as design.
func TestTechnicalNeedsATermOrOdds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		want Type
	}{
		// the model says concept, at odds under untermedLead
		{"what's the most exciting part of this job for you", Behavioural},
		// the model says design, at odds of 70 to 17,000 to one
		{"How would your manager describe you", Behavioural},
		{"How would you describe your leadership style", Behavioural},
		{"How would you handle a teammate who keeps missing deadlines", Behavioural},
		// the model agrees with the rules here; it must go on agreeing
		{"你的同事会怎么评价你", Behavioural},
		// technical, by a rule or a term
		{"How would you find the shortest path in a maze", Coding},
		{"How would you design a URL shortener", Design},
		{"How would you describe the CAP theorem to a new hire", Concept},
	} {
		if got := Classify(c.text, "en"); got != c.want {
			t.Errorf("Classify(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}

// TestTopicTurns: a turn whose last clause only names a technical topic
// asks about it (coach.Asks); a remark on a topic, or an order the
// interviewer gives themself, does not.
func TestTopicTurns(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"ACID": true,
		"Cool. Okay warm up, reverse a linked list":                true,
		"Containers versus virtual machines":                       true,
		"Okay technical. Stack versus heap memory":                 true,
		"Number of islands in a grid":                              true,
		"Okay coding-ish. Lowest common ancestor in a binary tree": true,
		"B+ 树和 LSM 树 区别":                                           true,
		"最长递增子序列":                                                  true,
		"Let me paste the problem into the chat.":                  false,
		"We use Kubernetes heavily here.":                          false,
		"the numbers look good":                                    false,
		"我们用 Kafka":                                                false,
	} {
		if got := Asks(text); got != want {
			t.Errorf("Asks(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestAboutThePerson: a question about the candidate as a person, in
// behavioural words, is one whatever its type; one that points back at
// the candidate's words or asks about their team's ways is a follow-up.
func TestAboutThePerson(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"你和同事有过分歧吗，最后怎么解决的":                                           true,
		"How would your teammates describe you?":                      true,
		"On that project, what did your manager say about your work?": true,
		"你刚才说跟同事有冲突，后来怎么样了":                                           false,
		"你们组里同事之间的反馈一般怎么给":                                            false,
		"You mentioned a conflict with a teammate. How did it end?":   false,
		"Why did you pick Kafka for the pipeline?":                    false,
		"你们的数据库隔离级别是什么":                                               false,
	} {
		if got := AboutThePerson(text); got != want {
			t.Errorf("AboutThePerson(%q) = %v, want %v", text, got, want)
		}
	}
}

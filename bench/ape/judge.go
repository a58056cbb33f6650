package ape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Grades from best to worst, as the APE-Bench judge gives them.
var Grades = []string{"Excellent", "Good", "Acceptable", "Poor", "Unacceptable"}

// Judgement is one judge answer read as APE-Bench reads it: the values of
// its TaskEvaluations object (one grade per task of the instruction, in
// the order written) and its FinalOverallGrade, which APE-Bench records
// and does not count.
type Judgement struct {
	Grades []string
	Final  string
}

var (
	jsonBlock  = regexp.MustCompile("(?s)```json(.*?)```")
	jsonObject = regexp.MustCompile(`(?s)\{.*"TaskEvaluations".*\}`)
)

// ParseJudgement reads a judge's answer as APE-Bench's judgement pipeline
// does: the last ```json block, or when there is none the text from the
// first "{" to the last "}" around "TaskEvaluations", parsed as JSON; the
// TaskEvaluations object's values are the grades. An answer without such
// an object is an error: the vote has no grade and counts for neither
// side. Grades are kept as written; [Verdict] compares them without case.
func ParseJudgement(answer string) (Judgement, error) {
	var text string
	if m := jsonBlock.FindAllStringSubmatch(answer, -1); len(m) > 0 {
		text = m[len(m)-1][1]
	} else if text = jsonObject.FindString(answer); text == "" {
		return Judgement{}, errors.New("judge answer: no ```json block and no object holding TaskEvaluations")
	}
	var doc struct {
		TaskEvaluations json.RawMessage `json:"TaskEvaluations"`
		Final           any             `json:"FinalOverallGrade"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return Judgement{}, fmt.Errorf("judge answer: %w", err)
	}
	if doc.TaskEvaluations == nil {
		return Judgement{}, errors.New("judge answer: no TaskEvaluations")
	}
	grades, err := orderedValues(doc.TaskEvaluations)
	if err != nil {
		return Judgement{}, fmt.Errorf("judge answer: TaskEvaluations: %w", err)
	}
	j := Judgement{Grades: grades}
	j.Final, _ = doc.Final.(string)
	return j, nil
}

// orderedValues returns the values of a JSON object in the order of its
// keys' first appearance (a repeated key's last value wins, as in Python's
// json.loads, which APE-Bench uses); a value that is not a string is kept
// as its JSON text, which no grade matches.
func orderedValues(obj json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var keys []string
	vals := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		v := string(raw)
		var str string
		if json.Unmarshal(raw, &str) == nil {
			v = str
		}
		if _, seen := vals[key]; !seen {
			keys = append(keys, key)
		}
		vals[key] = v
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, vals[k])
	}
	return out, nil
}

// VoteCount is what the votes on one candidate add up to (see [Verdict]).
type VoteCount struct {
	// Positive counts the grades Good and Excellent of all votes,
	// Negative the grades Poor and Unacceptable; Acceptable and grades
	// not among Grades count for neither.
	Positive int `json:"positive_grades"`
	Negative int `json:"negative_grades"`
	// Worst is the worst grade given, Majority the most frequent (a tie
	// going to the one given first), as APE-Bench records them; "" when
	// no vote gave a grade.
	Worst    string `json:"worst_grade,omitempty"`
	Majority string `json:"grade,omitempty"`
}

// Verdict applies APE-Bench's rule (filter_judgement_results) to the
// grades of a candidate's votes: it passes when the positive grades
// outnumber the negative ones, over every task grade of every vote.
func Verdict(votes [][]string) (pass bool, c VoteCount) {
	count := map[int]int{}
	var order []int // grade ranks in the order first given
	worst := -1
	for _, v := range votes {
		for _, g := range v {
			r := rankFold(g)
			switch r {
			case 0, 1:
				c.Positive++
			case 3, 4:
				c.Negative++
			}
			if r == len(Grades) {
				continue
			}
			if count[r] == 0 {
				order = append(order, r)
			}
			count[r]++
			worst = max(worst, r)
		}
	}
	best := -1
	for _, r := range order {
		if best < 0 || count[r] > count[best] {
			best = r
		}
	}
	if worst >= 0 {
		c.Worst, c.Majority = Grades[worst], Grades[best]
	}
	return c.Positive > c.Negative, c
}

// rankFold is the index in Grades of g compared without case, as
// APE-Bench lower-cases a grade (and nothing else: " Good" is no grade);
// len(Grades) when g is none of them.
func rankFold(g string) int {
	for i, x := range Grades {
		if strings.ToLower(g) == strings.ToLower(x) {
			return i
		}
	}
	return len(Grades)
}

// Dimensions are the judge's per-dimension grades, as its prompt asks.
var Dimensions = []string{"Correctness", "Completeness", "Scope"}

var dimensionLine = regexp.MustCompile(`(?mi)^\s*(?:\*\*)?(correctness|completeness|scope):(?:\*\*)?\s*(?:\*\*)?([A-Za-z]+)(?:\*\*)?\s*\.?\s*$`)

// ParseDimensions reads the per-dimension grades of a judge's answer:
// dimension → grade, for the lines whose grade is one of Grades. The final
// Grade line alone decides pass or fail; these are recorded for reading.
func ParseDimensions(answer string) map[string]string {
	out := map[string]string{}
	for _, m := range dimensionLine.FindAllStringSubmatch(answer, -1) {
		g := strings.ToUpper(m[2][:1]) + strings.ToLower(m[2][1:])
		if rank(g) < len(Grades) {
			out[strings.ToLower(m[1])] = g
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ErrorCategories are the judge's error taxonomy, as its prompt lists it.
var ErrorCategories = []string{"none", "incomplete", "wrong-logic", "off-target", "style"}

var categoryLine = regexp.MustCompile(`(?mi)^\s*(?:\*\*)?(?:error\s+)?category:(?:\*\*)?\s*(?:\*\*)?([a-z-]+)(?:\*\*)?\s*\.?\s*$`)

// ParseCategory reads the error category of a judge's answer: the last
// line "Error category: C" (or "Category: C") with C one of
// ErrorCategories; "" when the answer names none. The grade decides pass
// or fail; the category only counts in the taxonomy.
func ParseCategory(answer string) string {
	m := categoryLine.FindAllStringSubmatch(answer, -1)
	if len(m) == 0 {
		return ""
	}
	c := strings.ToLower(m[len(m)-1][1])
	for _, x := range ErrorCategories {
		if c == x {
			return c
		}
	}
	return ""
}

// MajorityCategory is the most frequent category of the votes; a tie goes
// to an error over "none", then to the one listed first in
// ErrorCategories (an error named by half the votes is counted), and ""
// when no vote names one.
func MajorityCategory(cats []string) string {
	return majority(cats, append(slices.Clone(ErrorCategories[1:]), ErrorCategories[0]))
}

// majority returns the most frequent of votes ("" ignored), a tie going to
// the value that comes first in order.
func majority(votes, order []string) string {
	count := map[string]int{}
	for _, v := range votes {
		if v != "" {
			count[v]++
		}
	}
	best := ""
	for _, v := range order {
		if count[v] > count[best] {
			best = v
		}
	}
	return best
}

func rank(g string) int {
	for i, x := range Grades {
		if x == g {
			return i
		}
	}
	return len(Grades)
}

func judgePrompt(t *Task, candidate string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Code evaluation request\n\n## Original source code: %s\n\n```\n%s```\n\n", t.Path(), t.ContentBefore)
	fmt.Fprintf(&b, "## Task requirements\n\n%s\n\n## Proposed implementation\n\n```diff\n%s```\n\n", t.Instruction, candidate)
	b.WriteString("Evaluate whether this implementation fulfills the task requirements correctly, completely and clearly, " +
		"changing nothing they do not ask for. After your analysis, grade each dimension on a line of its own " +
		"(Correctness: G, Completeness: G, Scope: G), name an error category on a line " +
		"(Error category: none, incomplete, wrong-logic, off-target or style), then give the overall judgement " +
		"strictly in this JSON format, one entry per task of the requirements (Task 1 only when there is one):\n\n" +
		"```json\n{\n  \"TaskEvaluations\": {\n    \"Task 1\": \"Excellent | Good | Acceptable | Poor | Unacceptable\"\n  },\n" +
		"  \"FinalOverallGrade\": \"Excellent | Good | Acceptable | Poor | Unacceptable\"\n}\n```\n\n" +
		"where each G and each grade is one of Excellent, Good, Acceptable, Poor, Unacceptable.\n")
	return b.String()
}

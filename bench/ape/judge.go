package ape

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Grades from best to worst, as the APE-Bench judge gives them.
var Grades = []string{"Excellent", "Good", "Acceptable", "Poor", "Unacceptable"}

var gradeLine = regexp.MustCompile(`(?m)^\s*(?:\*\*)?Grade:(?:\*\*)?\s*(?:\*\*)?([A-Za-z]+)(?:\*\*)?\s*$`)

// ParseGrade reads the judge's answer strictly: exactly one line
// "Grade: G" with G one of Grades (case as written there).
func ParseGrade(answer string) (string, error) {
	m := gradeLine.FindAllStringSubmatch(answer, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("judge answer: want one Grade line, found %d", len(m))
	}
	for _, g := range Grades {
		if m[0][1] == g {
			return g, nil
		}
	}
	return "", fmt.Errorf("judge answer: unknown grade %q", m[0][1])
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

// Majority returns the most frequent of the parsed grades. Tie rule: among
// grades with the same count the worse one wins, so a split judge never
// passes a candidate (2 Good and 2 Poor give Poor). No grade gives "".
func Majority(grades []string) string {
	worstFirst := slices.Clone(Grades)
	slices.Reverse(worstFirst)
	return majority(grades, worstFirst)
}

// Passes reports whether a majority grade passes: Good or Excellent.
func Passes(grade string) bool { return grade == "Excellent" || grade == "Good" }

func judgePrompt(t *Task, candidate string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You review an edit of %s made for this instruction:\n\n%s\n\n", t.Path(), t.Instruction)
	fmt.Fprintf(&b, "The file before the edit:\n```\n%s```\n\nThe edit:\n```diff\n%s```\n\n", t.ContentBefore, candidate)
	b.WriteString("Judge whether the edit does what the instruction asks, correctly and completely. " +
		"Grade each dimension on a line of its own (Correctness: G, Completeness: G, Scope: G, the last for " +
		"changing nothing the instruction does not ask), give a reason, an error category (none, incomplete, " +
		"wrong-logic, off-target, style), and end with one line\n" +
		"Grade: G\nwhere G is one of Excellent, Good, Acceptable, Poor, Unacceptable. The final Grade decides.\n")
	return b.String()
}

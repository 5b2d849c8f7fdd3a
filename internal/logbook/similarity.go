package logbook

import (
	"strings"
	"unicode"
)

// SimilarGoal is the GoalSimilarity at or above which two goals are about
// the same thing.
const SimilarGoal = 0.5

// GoalSimilarity measures how alike two goals are, from 0 to 1: the share
// of the first goal's significant words (lower case, three letters or more,
// not a stop word, with a plural "s" dropped) that the second one also has.
// "fix the flaky login test" against "Login tests are flaky again" is 0.75.
// It is deliberately simple: it explains itself, and goals are short.
func GoalSimilarity(goal, other string) float64 {
	mine, theirs := significantWords(goal), significantWords(other)
	if len(mine) == 0 || len(theirs) == 0 {
		return 0
	}
	shared := 0
	for w := range mine {
		if theirs[w] {
			shared++
		}
	}
	return float64(shared) / float64(len(mine))
}

var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "into": true, "that": true,
	"this": true, "are": true, "was": true, "again": true, "please": true,
	"all": true, "our": true, "not": true, "but": true, "can": true, "should": true, "when": true,
}

func significantWords(text string) map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 3 || stopWords[w] {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = strings.TrimSuffix(w, "s")
		}
		words[w] = true
	}
	return words
}

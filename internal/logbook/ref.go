package logbook

import (
	"encoding/json"
	"strconv"
)

// Ref is an issue or pull request as JSON carries it: read from a string
// ("12", "#12", "JIRA-7") or a number (12), and written as a number when
// it is all digits, as GitHub numbers issues, else as a string. So an
// agent that sends "issue": 12 gets "issue": 12 back; one that sends
// "12" gets 12 too: logbook keeps the text, not which form it came in.
type Ref string

// MarshalJSON writes the number form of an all-digits ref, else the string.
func (r Ref) MarshalJSON() ([]byte, error) {
	if isNumber(string(r)) {
		return []byte(r), nil
	}
	return json.Marshal(string(r))
}

// UnmarshalJSON reads a string or a number.
func (r *Ref) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*r = Ref(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return Invalid("", "an issue or pull request is a number or a string, not %s", b)
	}
	*r = Ref(n.String())
	return nil
}

// isNumber reports whether s is a whole number JSON writes as it is: digits
// with no leading zero (so "007" stays a string) that fit in 53 bits, the
// integers every JSON reader holds exactly.
func isNumber(s string) bool {
	if s == "" || len(s) > 15 || (s[0] == '0' && s != "0") {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

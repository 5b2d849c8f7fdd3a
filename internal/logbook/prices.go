package logbook

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Price is what a model charges, in US dollars per million tokens: for
// input read fresh, for input read from the prompt cache, for input
// written to it, and for output.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
	// Source says where the price comes from: the provider's page, or
	// "project" for a project's own price.
	Source string `json:"source,omitempty"`
}

// MaxPrice bounds a price, in US dollars per million tokens.
const MaxPrice = 10_000

// Validate checks that every rate is a number of dollars from 0 to
// MaxPrice. field names the price in errors.
func (p Price) Validate(field string) error {
	for _, r := range []struct {
		name string
		rate float64
	}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
		if math.IsNaN(r.rate) || r.rate < 0 || r.rate > MaxPrice {
			return Invalid(field+"."+r.name, "%v is not a price; give US dollars per million tokens, 0 to %d", r.rate, MaxPrice)
		}
	}
	return nil
}

// PriceTable is a dated list of prices by model name.
type PriceTable struct {
	// Date is when the prices were read from their sources.
	Date string `json:"date"`
	// Models maps a model name, or the start of one, to its price.
	Models map[string]Price `json:"models"`
}

//go:embed prices.json
var pricesJSON []byte

// DefaultPrices is the price table built into logbook (prices.json):
// Anthropic's Claude models and the OpenAI models Codex uses, with the
// date they were read and each one's source. A project's own prices
// (WithProjectPrices) take precedence over it. Every call returns the
// same table: read it, never change it.
var DefaultPrices = sync.OnceValue(func() PriceTable {
	var t PriceTable
	if err := json.Unmarshal(pricesJSON, &t); err != nil {
		panic(fmt.Sprintf("logbook: the built-in price table does not parse: %v", err))
	}
	return t
})

// WithProjectPrices is the table with a project's own prices added,
// each replacing the built-in price of the same name and marked with
// Source "project".
func (t PriceTable) WithProjectPrices(own map[string]Price) PriceTable {
	if len(own) == 0 {
		return t
	}
	merged := PriceTable{Date: t.Date, Models: make(map[string]Price, len(t.Models)+len(own))}
	for name, p := range t.Models {
		merged.Models[name] = p
	}
	for name, p := range own {
		p.Source = "project"
		merged.Models[name] = p
	}
	return merged
}

// Lookup finds a model's price: that of the longest name in the table
// the model's name starts with, followed by nothing or by "-", "@", ":"
// or "[" (so claude-sonnet-4-5-20250929 and claude-opus-4-6[1m] find
// their family, but gpt-5.1 does not take gpt-5's price). Names are
// compared in lower case, after a provider's prefix such as
// "us.anthropic." or "openai/". It returns the name it matched.
func (t PriceTable) Lookup(model string) (Price, string, bool) {
	model = strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(model, "anthropic."); i >= 0 {
		model = model[i+len("anthropic."):]
	}
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	best := ""
	for name := range t.Models {
		key := strings.ToLower(name)
		if len(key) <= len(best) || !strings.HasPrefix(model, key) {
			continue
		}
		if rest := model[len(key):]; rest == "" || strings.ContainsRune("-@:[", rune(rest[0])) {
			best = name
		}
	}
	if best == "" {
		return Price{}, "", false
	}
	return t.Models[best], best, true
}

// Names lists the table's model names in order.
func (t PriceTable) Names() []string {
	names := make([]string, 0, len(t.Models))
	for name := range t.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// MaxCostMicros bounds the cost one model call may report (cost_usd): a
// million dollars.
const MaxCostMicros = 1_000_000 * 1_000_000

// Cost is what a model call with usage u cost at price p, in millionths
// of a US dollar (micro-dollars), rounded to the nearest. InputTokens
// counts every prompt token, cached ones included: those read from the
// cache are priced at CacheRead, those written to it at CacheWrite, and
// the rest at Input.
func Cost(u Usage, p Price) int64 {
	fresh := max(0, u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens)
	// Σ tokens × micro-dollars per million tokens, in 128 bits: a count
	// may be MaxTokens and a rate MaxPrice.
	var hi, lo uint64
	for _, part := range []struct {
		tokens int64
		rate   float64
	}{{fresh, p.Input}, {u.CacheReadTokens, p.CacheRead}, {u.CacheWriteTokens, p.CacheWrite}, {u.OutputTokens, p.Output}} {
		if part.tokens <= 0 {
			continue
		}
		h, l := bits.Mul64(uint64(part.tokens), uint64(math.Round(part.rate*1e6)))
		var carry uint64
		lo, carry = bits.Add64(lo, l, 0)
		hi += h + carry
	}
	// Divided by a million tokens, rounding half up.
	lo, carry := bits.Add64(lo, 500_000, 0)
	hi += carry
	if hi >= 1_000_000 { // the quotient would not fit 64 bits
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, 1_000_000)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// SetCost fixes the call's cost: the harness's own figure when it gave
// one (CostReported), else its tokens priced by t at the price of the
// call's model or, when it names none, sessionModel; 0 for a model t
// does not know. CostUSD is cleared: CostMicros holds the cost.
func (u *Usage) SetCost(t PriceTable, sessionModel string) {
	if u.CostReported() {
		u.CostUSD = nil
		return
	}
	u.CostMicros = 0
	model := u.Model
	if model == "" {
		model = sessionModel
	}
	if p, _, ok := t.Lookup(model); ok {
		u.CostMicros = Cost(*u, p)
	}
}

// FormatUSD writes micro-dollars as dollars a person reads: $0, <$0.01,
// $0.42, $12.50, $1,234.
func FormatUSD(micros int64) string {
	switch {
	case micros == 0:
		return "$0"
	case micros < 5_000:
		return "<$0.01"
	case micros < 1_000_000_000:
		return fmt.Sprintf("$%.2f", float64(micros)/1e6)
	}
	dollars := strconv.FormatInt((micros+500_000)/1_000_000, 10)
	var b strings.Builder
	for i, r := range dollars {
		if i > 0 && (len(dollars)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return "$" + b.String()
}

// ValidateProjectPrices checks a project's own prices: a model name of
// at most MaxModel characters, and valid rates.
func ValidateProjectPrices(prices map[string]Price) error {
	if len(prices) > MaxBatch {
		return Invalid("models", "a project sets at most %d prices", MaxBatch)
	}
	for name, p := range prices {
		if strings.TrimSpace(name) == "" || len(name) > MaxModel {
			return Invalid("models", "%q is not a model name; give 1 to %d characters", name, MaxModel)
		}
		if err := p.Validate("models." + name); err != nil {
			return err
		}
	}
	return nil
}

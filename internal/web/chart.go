package web

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Charts are SVG drawn by the server: Go computes the geometry, the
// dashboard template writes the elements. Each bar carries a <title> with
// its numbers in words, and each colour is named in a legend, so a chart
// does not rely on colour alone.

// outcomeSeries are the stacked parts of a day's bar, bottom up; "" is a
// session that has not ended.
var outcomeSeries = []struct {
	Outcome logbook.Outcome
	Label   string
}{
	{logbook.OutcomeSuccess, "success"},
	{logbook.OutcomePartial, "partial"},
	{logbook.OutcomeFailed, "failed"},
	{"", "not ended"},
}

// dayOutcomes counts the sessions started on one UTC day by outcome.
type dayOutcomes struct {
	Day    time.Time
	Counts map[logbook.Outcome]int64
}

// stackedChart is a bar per day, stacked by outcome (or one series, such
// as cost).
type stackedChart struct {
	Label         string // what the chart shows, for screen readers
	Width, Height int
	PlotTop       int // y of the top gridline
	PlotBottom    int // y of the baseline
	PlotLeft      int
	PlotHeight    int
	Bars          []stackedBar
	Ticks         []tick
	Legend        []legendItem
	Total         int64
}

type stackedBar struct {
	X, W           int
	Label          string // the day, under every other bar
	LabelX, LabelY int
	Title          string // the day's numbers in words
	Segments       []segment
}

type segment struct {
	X, Y, W, H int
	Class      string
}

// tick is a gridline with its value written left of the plot.
type tick struct {
	Y            int
	TextX, TextY int
	Label        string
}

type legendItem struct{ Class, Label string }

// outcomeChart lays out days as stacked bars.
func outcomeChart(days []dayOutcomes) stackedChart {
	var series []chartSeries
	for _, s := range outcomeSeries {
		series = append(series, chartSeries{Key: s.Outcome, Class: outcomeClass(s.Outcome), Label: s.Label,
			Words: func(n int64) string { return fmt.Sprintf("%d %s", n, s.Label) }})
	}
	c := dayChart(days, series, 34, func(n int64) string { return fmt.Sprint(n) }, "no sessions")
	c.Label = fmt.Sprintf("Sessions started per day by outcome, %d in all", c.Total)
	return c
}

// costChart lays out what each day's sessions cost (their Counts[""],
// in micro-dollars) as bars.
func costChart(days []dayOutcomes) stackedChart {
	c := dayChart(days, []chartSeries{{Key: "", Class: "fill-cost", Label: "cost", Words: logbook.FormatUSD}}, 52, logbook.FormatUSD, "$0")
	c.Label = "Cost per day of the sessions started that day, " + logbook.FormatUSD(c.Total) + " in all"
	return c
}

// chartSeries is one stacked part of dayChart's bars: the counts under
// Key, coloured by Class, named by Label in the legend and by Words in a
// bar's title.
type chartSeries struct {
	Key          logbook.Outcome
	Class, Label string
	Words        func(n int64) string
}

// dayChart lays out days as bars stacked by series, the plot starting
// left pixels in (room for the tick labels axis writes); a day's title
// says none when it has nothing.
func dayChart(days []dayOutcomes, series []chartSeries, left int, axis func(int64) string, none string) stackedChart {
	c := stackedChart{Width: 520, Height: 200, PlotTop: 12, PlotBottom: 172, PlotLeft: left}
	var top int64
	for _, d := range days {
		var sum int64
		for _, n := range d.Counts {
			sum += n
		}
		top = max(top, sum)
		c.Total += sum
	}
	top = niceCeiling(top)
	plotH := c.PlotBottom - c.PlotTop
	c.PlotHeight = plotH
	for _, v := range []int64{0, top / 2, top} {
		y := c.PlotBottom - int(int64(plotH)*v/top)
		c.Ticks = append(c.Ticks, tick{Y: y, TextX: c.PlotLeft - 6, TextY: y + 4, Label: axis(v)})
	}
	for _, s := range series {
		c.Legend = append(c.Legend, legendItem{Class: s.Class, Label: s.Label})
	}
	if len(days) == 0 {
		return c
	}
	slot := (c.Width - c.PlotLeft - 4) / len(days)
	for i, d := range days {
		bar := stackedBar{X: c.PlotLeft + i*slot + slot/6, W: slot * 2 / 3}
		bar.LabelX, bar.LabelY = bar.X+bar.W/2, c.PlotBottom+18
		if (len(days)-1-i)%2 == 0 {
			bar.Label = d.Day.Format("Jan 2")
		}
		y := c.PlotBottom
		var words []string
		for _, s := range series {
			n := d.Counts[s.Key]
			if n == 0 {
				continue
			}
			h := int(int64(plotH) * n / top)
			y -= h
			bar.Segments = append(bar.Segments, segment{X: bar.X, Y: y, W: bar.W, H: h, Class: s.Class})
			words = append(words, s.Words(n))
		}
		if len(words) == 0 {
			words = []string{none}
		}
		bar.Title = d.Day.Format("Mon Jan 2") + ": " + strings.Join(words, ", ")
		c.Bars = append(c.Bars, bar)
	}
	return c
}

// outcomeClass is the CSS class that colours an outcome.
func outcomeClass(o logbook.Outcome) string {
	if o == "" {
		return "fill-open"
	}
	return "fill-" + string(o)
}

// niceCeiling rounds n up to 1, 2 or 5 times a power of ten (at least 2),
// so the gridlines fall on round numbers.
func niceCeiling(n int64) int64 {
	if n <= 2 {
		return 2
	}
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

// barChart is a horizontal bar per key, longest first.
type barChart struct {
	Width, Height int
	LabelWidth    int // where the bars start
	LabelX        int // where the labels end
	Rows          []barRow
}

type barRow struct {
	Y, W     int // the bar's top and width
	TextY    int // the baseline of the row's texts
	CountX   int
	Label    string
	Count    int64
	Title    string
	Class    string
	Sessions string // the sessions list filtered to this key
}

// blockerChart lays out the blockers of sessions that did not succeed;
// link returns the sessions list for a blocker.
func blockerChart(rows []logbook.StatsRow, link func(blocker string) string) barChart {
	c := barChart{Width: 480, LabelWidth: 160, LabelX: 152}
	var kept []logbook.StatsRow
	for _, r := range rows {
		if r.Key != "" && r.Sessions > 0 {
			kept = append(kept, r)
		}
	}
	slices.SortStableFunc(kept, func(a, b logbook.StatsRow) int { return cmp.Compare(b.Sessions, a.Sessions) })
	var top int64 = 1
	for _, r := range kept {
		top = max(top, r.Sessions)
	}
	const rowH = 28
	room := c.Width - c.LabelWidth - 48
	for i, r := range kept {
		label := strings.ReplaceAll(r.Key, "_", " ")
		c.Rows = append(c.Rows, barRow{
			Y: i*rowH + 6, W: max(2, int(int64(room)*r.Sessions/top)), TextY: i*rowH + 19,
			Label: label, Count: r.Sessions, Title: plural(r.Sessions, "session", "sessions") + " blocked by " + label,
			Class: "fill-blocker", Sessions: link(r.Key),
		})
		c.Rows[i].CountX = c.LabelWidth + c.Rows[i].W + 6
	}
	c.Height = len(kept)*rowH + 4
	return c
}

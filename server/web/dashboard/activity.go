package dashboard

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payhook/payhook/notifier"
)

// ActivityHours is how many clock hours the activity page plots, the last
// being the current one.
const ActivityHours = 48

// The plots' geometry, in SVG user units: one slot per hour.
const (
	plotSlot   = 10
	plotLeft   = 52
	plotTop    = 10
	plotHeight = 170
	plotWidth  = ActivityHours * plotSlot
	plotW      = plotLeft + plotWidth + 12
	plotH      = plotTop + plotHeight + 40
)

// outcomeSeries is one outcome of the deliveries plot: its legend entry
// and total.
type outcomeSeries struct {
	Name  string
	Class string
	Total int
	count func(notifier.ActivityHour) int
}

// outcomes are the stacked series, bottom first.
var outcomes = []outcomeSeries{
	{Name: "acknowledged", Class: "out-acknowledged", count: func(h notifier.ActivityHour) int { return h.Acknowledged }},
	{Name: "failed", Class: "out-failed", count: func(h notifier.ActivityHour) int { return h.Failed }},
	{Name: "blocked", Class: "out-blocked", count: func(h notifier.ActivityHour) int { return h.Blocked }},
	{Name: "interrupted", Class: "out-interrupted", count: func(h notifier.ActivityHour) int { return h.Interrupted }},
}

// plot is one server-rendered SVG chart: everything positioned here, so
// the template only places what it is given.
type plot struct {
	W, H     int
	Left     float64
	Right    float64
	Top      float64
	Bottom   float64
	YTicks   []tick
	XTicks   []tick
	Rects    []mark
	Dots     []mark
	Lines    []polyline
	AxisText string // the x axis' title
	AxisY    float64
	CenterX  float64
	// yOf places a value of the plot's scale.
	yOf func(float64) float64
}

// tick is a grid line or axis tick with its label.
type tick struct {
	X1, Y1, X2, Y2 float64
	TX, TY         float64
	Label          string
}

// mark is a bar (X, Y, W, H) or a dot (X, Y) with its tooltip.
type mark struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

// polyline is one unbroken run of a line series.
type polyline struct {
	Class  string
	Points string
}

// hourRow is one hour of the table under the plots.
type hourRow struct {
	Hour                                     string
	Acknowledged, Failed, Blocked, Interrupt int
	P50, P95, Max                            string
}

// activityData is the activity page.
type activityData struct {
	dashLayout
	From, Until time.Time
	Hours       int
	Empty       bool
	Truncated   bool
	Max         int
	Outcomes    []outcomeSeries
	Total       notifier.ActivityHour
	P50         string
	P95         string
	MaxLatency  string
	InFlight    int
	Deliveries  plot
	Latency     plot
	Rows        []hourRow
}

func (h *Handler) activityPage(w http.ResponseWriter, r *http.Request, s *session) {
	a, err := notifier.ReadActivity(r.Context(), h.cfg.DB, s.user.ProjectID, h.cfg.Now(), ActivityHours)
	if err != nil {
		h.pages.Fail(w, "delivery activity", err)
		return
	}
	d := activityData{
		dashLayout: h.layoutOf(r, s, "Activity", "activity"),
		From:       a.From, Until: a.Until, Hours: ActivityHours, Truncated: a.Truncated, Max: notifier.MaxActivityAttempts,
		Total: a.Total, InFlight: a.Total.InFlight,
		Empty: a.Total.Finished()+a.Total.InFlight == 0,
		P50:   millis(a.Total.P50), P95: millis(a.Total.P95), MaxLatency: millis(a.Total.Max),
	}
	for _, o := range outcomes {
		o.Total = o.count(a.Total)
		d.Outcomes = append(d.Outcomes, o)
	}
	if !d.Empty {
		d.Deliveries = deliveriesPlot(a)
		d.Latency = latencyPlot(a)
		for _, hr := range a.Hours {
			if hr.Finished()+hr.InFlight == 0 {
				continue
			}
			d.Rows = append(d.Rows, hourRow{
				Hour:         hr.Start.Format("2006-01-02 15:00"),
				Acknowledged: hr.Acknowledged, Failed: hr.Failed, Blocked: hr.Blocked, Interrupt: hr.Interrupted,
				P50: millisOr(hr, hr.P50), P95: millisOr(hr, hr.P95), Max: millisOr(hr, hr.Max),
			})
		}
	}
	h.pages.Render(w, http.StatusOK, "activity", d)
}

// frame returns an empty plot of a's hours with a y tick at each of ticks,
// placed by yOf (0 at the bottom, 1 at the top) and labelled by label.
func frame(a *notifier.Activity, ticks []float64, yOf func(float64) float64, label func(float64) string) plot {
	p := plot{
		W: plotW, H: plotH, Left: plotLeft, Right: plotLeft + plotWidth, Top: plotTop, Bottom: plotTop + plotHeight,
		AxisText: "hour (UTC)", AxisY: plotH - 4, CenterX: plotLeft + plotWidth/2,
	}
	p.yOf = func(v float64) float64 { return round(p.Bottom - yOf(v)*(p.Bottom-p.Top)) }
	for _, v := range ticks {
		y := p.yOf(v)
		p.YTicks = append(p.YTicks, tick{X1: p.Left, Y1: y, X2: p.Right, Y2: y, TX: p.Left - 4, TY: round(y + 4), Label: label(v)})
	}
	for i, hr := range a.Hours {
		if hr.Start.Hour()%6 != 0 {
			continue
		}
		x := float64(plotLeft + i*plotSlot)
		l := hr.Start.Format("15:04")
		if hr.Start.Hour() == 0 {
			l = hr.Start.Format("Jan 2")
		}
		p.XTicks = append(p.XTicks, tick{X1: x, Y1: p.Bottom, X2: x, Y2: p.Bottom + 4, TX: x, TY: p.Bottom + 16, Label: l})
	}
	return p
}

// deliveriesPlot stacks each hour's attempts by outcome, on a linear
// scale.
func deliveriesPlot(a *notifier.Activity) plot {
	most := 0
	for _, hr := range a.Hours {
		most = max(most, hr.Finished())
	}
	step := niceStep(float64(most), 4, 1)
	top := step * math.Max(1, math.Ceil(float64(most)/step))
	var ticks []float64
	for v := 0.0; v <= top+step/2; v += step {
		ticks = append(ticks, v)
	}
	p := frame(a, ticks, func(v float64) float64 { return v / top }, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
	for i, hr := range a.Hours {
		base := 0
		for _, o := range outcomes {
			n := o.count(hr)
			if n == 0 {
				continue
			}
			y0, y1 := p.yOf(float64(base)), p.yOf(float64(base+n))
			p.Rects = append(p.Rects, mark{
				X: float64(plotLeft+i*plotSlot) + 1, Y: y1, W: plotSlot - 2, H: round(y0 - y1),
				Class: o.Class, Title: fmt.Sprintf("%s–%s UTC: %d %s", hr.Start.Format("Jan 2 15:04"), hr.Start.Add(time.Hour).Format("15:04"), n, o.Name),
			})
			base += n
		}
	}
	return p
}

// latencyPlot draws each hour's median and 95th percentile attempt
// duration on a logarithmic scale from 1 ms (a few timeouts would flatten
// every other hour on a linear one); hours without a timed attempt break
// the lines, and durations under 1 ms sit on the axis.
func latencyPlot(a *notifier.Activity) plot {
	var most time.Duration
	for _, hr := range a.Hours {
		most = max(most, hr.P95)
	}
	decades := max(1, math.Ceil(math.Log10(float64(max(most, 2*time.Millisecond))/float64(time.Millisecond))))
	var ticks []float64
	for e := 0.0; e <= decades; e++ {
		ticks = append(ticks, math.Pow(10, e))
	}
	yOf := func(ms float64) float64 { return math.Log10(math.Max(ms, 1)) / decades }
	p := frame(a, ticks, yOf, func(v float64) string { return millis(time.Duration(v * float64(time.Millisecond))) })
	for _, series := range []struct {
		name, class string
		value       func(notifier.ActivityHour) time.Duration
	}{
		{"p50", "lat-p50", func(h notifier.ActivityHour) time.Duration { return h.P50 }},
		{"p95", "lat-p95", func(h notifier.ActivityHour) time.Duration { return h.P95 }},
	} {
		var run []string
		end := func() {
			if len(run) > 1 {
				p.Lines = append(p.Lines, polyline{Class: series.class, Points: strings.Join(run, " ")})
			}
			run = nil
		}
		for i, hr := range a.Hours {
			if hr.Timed == 0 {
				end()
				continue
			}
			x := float64(plotLeft+i*plotSlot) + plotSlot/2
			y := p.yOf(float64(series.value(hr)) / float64(time.Millisecond))
			run = append(run, strconv.FormatFloat(x, 'f', -1, 64)+","+strconv.FormatFloat(y, 'f', -1, 64))
			p.Dots = append(p.Dots, mark{X: x, Y: y, Class: series.class, Title: fmt.Sprintf("%s–%s UTC: %s %s of %d attempts",
				hr.Start.Format("Jan 2 15:04"), hr.Start.Add(time.Hour).Format("15:04"), series.name, millis(series.value(hr)), hr.Timed)})
		}
		end()
	}
	return p
}

// niceStep returns a step of 1, 2 or 5 times a power of ten, at least
// least, that divides 0..v in about n steps.
func niceStep(v float64, n int, least float64) float64 {
	raw := v / float64(n)
	if raw <= least {
		return least
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// round keeps one decimal, enough for a plot and short in the page.
func round(v float64) float64 { return math.Round(v*10) / 10 }

// millis shows a duration as people read latencies: "120 ms", "1.5 s".
func millis(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 64) + " s"
}

// millisOr is millis of d, or a dash for an hour without a timed attempt.
func millisOr(h notifier.ActivityHour, d time.Duration) string {
	if h.Timed == 0 {
		return "–"
	}
	return millis(d)
}

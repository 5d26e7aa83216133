package promtext

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parse reads text as Prometheus does, with a maintained parser.
func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err, text)
	return families
}

func text(t *testing.T, r *Registry) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, r.WriteText(&b))
	return b.String()
}

// Label values and help no text could break are read back as they were
// given: quotes, backslashes, newlines and UTF-8, each escaped as the
// format says.
func TestHostileTextReadsBackAsGiven(t *testing.T) {
	hostile := []string{`quo"te`, `back\slash`, "new\nline", "ütf-8 ✓", `\"` + "\n\\n", "", "}", `a="b",c`}
	help := "Help with a back\\slash,\na newline and \"quotes\" ✓."
	r := NewRegistry()
	c := r.NewCounterVec("test_things_total", help, "name", "kind")
	d := NewDesc("test_level", help, Gauge, "name")
	r.Collect(func(s *Sink) {
		for i, v := range hostile {
			s.Add(d, float64(i)+0.5, v)
		}
	})
	for i, v := range hostile {
		c.Add(float64(i+1), v, v+"!")
	}
	out := text(t, r)
	assert.Contains(t, out, `# HELP test_level Help with a back\\slash,\na newline and "quotes" ✓.`+"\n", "help escapes backslash and newline only")
	assert.Contains(t, out, `test_level{name="\\\"\n\\n"} 4.5`+"\n")
	assert.Contains(t, out, `test_things_total{kind="quo\"te!",name="quo\"te"} 1`+"\n", "labels by name")

	got := parse(t, out)
	require.Len(t, got, 2)
	for name, typ := range map[string]dto.MetricType{"test_things_total": dto.MetricType_COUNTER, "test_level": dto.MetricType_GAUGE} {
		f := got[name]
		require.NotNil(t, f, name)
		assert.Equal(t, typ, f.GetType())
		assert.Equal(t, help, f.GetHelp())
		require.Len(t, f.GetMetric(), len(hostile))
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			i := -1
			for j, v := range hostile {
				if v == labels["name"] {
					i = j
				}
			}
			require.NotEqual(t, -1, i, "a value read back as none given: %q", labels["name"])
			if typ == dto.MetricType_COUNTER {
				assert.Equal(t, hostile[i]+"!", labels["kind"])
				assert.Equal(t, float64(i+1), m.GetCounter().GetValue())
			} else {
				assert.Equal(t, float64(i)+0.5, m.GetGauge().GetValue())
			}
		}
	}
}

// A histogram's buckets are cumulative, a value on a bound is in that
// bound's bucket, +Inf counts every value, with the sum and the count.
func TestHistogramBucketsAreCumulative(t *testing.T) {
	tests := []struct {
		name    string
		observe []float64
		want    map[float64]uint64 // upper bound: cumulative count
		sum     float64
	}{
		{"none", nil, map[float64]uint64{0.5: 0, 1: 0, 10: 0, math.Inf(1): 0}, 0},
		{"on the bounds", []float64{0.5, 1, 10}, map[float64]uint64{0.5: 1, 1: 2, 10: 3, math.Inf(1): 3}, 11.5},
		{"between and above", []float64{-3, 0.7, 0.7, 11, 1e9}, map[float64]uint64{0.5: 1, 1: 3, 10: 3, math.Inf(1): 5}, -3 + 0.7 + 0.7 + 11 + 1e9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			h := r.NewHistogram("test_seconds", "How long.", []float64{0.5, 1, 10})
			for _, v := range tt.observe {
				h.Observe(v)
			}
			f := parse(t, text(t, r))["test_seconds"]
			require.NotNil(t, f)
			require.Equal(t, dto.MetricType_HISTOGRAM, f.GetType())
			require.Len(t, f.GetMetric(), 1)
			hist := f.GetMetric()[0].GetHistogram()
			got := map[float64]uint64{math.Inf(1): hist.GetSampleCount()} // the parser keeps +Inf as the count
			for _, b := range hist.GetBucket() {
				got[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, uint64(len(tt.observe)), hist.GetSampleCount())
			assert.InDelta(t, tt.sum, hist.GetSampleSum(), 1e-9)
			assert.Equal(t, uint64(len(tt.observe)), h.Count())
		})
	}
}

// Families are written by name and series by their label values, labels
// by name whatever order they were declared in; a family with no series
// is left out.
func TestFamiliesAndSeriesAreSorted(t *testing.T) {
	r := NewRegistry()
	z := r.NewCounterVec("test_z_total", "Z.", "to", "from")
	r.NewCounterVec("test_empty_total", "Nothing yet.", "kind")
	g := r.NewGauge("test_a", "A.")
	g.Set(-1)
	z.Inc("b", "y")
	z.Inc("a", "y")
	z.Init("c", "x")
	want := "# HELP test_a A.\n# TYPE test_a gauge\ntest_a -1\n" +
		"# HELP test_z_total Z.\n# TYPE test_z_total counter\n" +
		"test_z_total{from=\"x\",to=\"c\"} 0\ntest_z_total{from=\"y\",to=\"a\"} 1\ntest_z_total{from=\"y\",to=\"b\"} 1\n"
	assert.Equal(t, want, text(t, r))
	assert.Equal(t, 1.0, z.Value("a", "y"))
	assert.Equal(t, -1.0, g.Value())
}

// The handler says the text's version, and gzips for a scraper that
// accepts it.
func TestHandlerServesTextGzippedOnRequest(t *testing.T) {
	r := NewRegistry()
	r.NewGauge("test_a", "A.").Set(2.5)
	for _, enc := range []string{"", "gzip", "deflate, gzip;q=1.0", "gzip;q=0"} {
		t.Run(enc, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if enc != "" {
				req.Header.Set("Accept-Encoding", enc)
			}
			rec := httptest.NewRecorder()
			r.Handler().ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code)
			assert.Equal(t, ContentType, rec.Header().Get("Content-Type"))
			body := io.Reader(rec.Body)
			if strings.Contains(enc, "gzip") && !strings.Contains(enc, "q=0") {
				require.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
				gz, err := gzip.NewReader(rec.Body)
				require.NoError(t, err)
				body = gz
			} else {
				assert.Empty(t, rec.Header().Get("Content-Encoding"))
			}
			b, err := io.ReadAll(body)
			require.NoError(t, err)
			assert.Equal(t, "# HELP test_a A.\n# TYPE test_a gauge\ntest_a 2.5\n", string(b))
		})
	}
}

// What the format cannot carry is a mistake in the code, told at once.
func TestMistakesPanic(t *testing.T) {
	r := NewRegistry()
	c := r.NewCounterVec("test_total", "T.", "kind")
	tests := map[string]func(){
		"a name with a dash":      func() { NewDesc("test-name", "", Gauge) },
		"a label with a colon":    func() { NewDesc("test", "", Gauge, "a:b") },
		"le on a histogram":       func() { NewDesc("test", "", Histogram, "le") },
		"too few label values":    func() { c.Inc() },
		"a counter going down":    func() { c.Add(-1, "x") },
		"buckets not increasing":  func() { r.NewHistogram("test_h", "", []float64{1, 0.5}) },
		"a histogram through Add": func() { (&Sink{families: map[*Desc][]series{}}).Add(NewDesc("h", "", Histogram), 1) },
	}
	for name, f := range tests {
		assert.Panics(t, f, name)
	}
}

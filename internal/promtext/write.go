package promtext

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// ContentType is what the handler says it serves: text format 0.0.4, as
// client_golang's handler said it for a scraper that asked for text.
const ContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// WriteText writes every family with a sample, sorted by name, each
// family's series sorted by their label values (labels by name).
func (r *Registry) WriteText(w io.Writer) error {
	s := r.gather()
	descs := make([]*Desc, 0, len(s.families))
	for d := range s.families {
		descs = append(descs, d)
	}
	slices.SortFunc(descs, func(a, b *Desc) int { return cmp.Compare(a.name, b.name) })
	b := bufio.NewWriter(w)
	for _, d := range descs {
		all := s.families[d]
		slices.SortStableFunc(all, func(x, y series) int {
			for _, i := range d.order {
				if c := cmp.Compare(x.values[i], y.values[i]); c != 0 {
					return c
				}
			}
			return 0
		})
		b.WriteString("# HELP " + d.name + " ")
		helpEscaper.WriteString(b, d.help)
		b.WriteString("\n# TYPE " + d.name + " " + string(d.typ) + "\n")
		for _, sr := range all {
			if sr.hist == nil {
				writeSample(b, d, "", sr.values, "", 0, formatFloat(sr.value))
				continue
			}
			h := sr.hist
			for i, upper := range h.upper {
				writeSample(b, d, "_bucket", sr.values, "le", upper, strconv.FormatUint(h.counts[i], 10))
			}
			writeSample(b, d, "_bucket", sr.values, "le", math.Inf(1), strconv.FormatUint(h.count, 10))
			writeSample(b, d, "_sum", sr.values, "", 0, formatFloat(h.sum))
			writeSample(b, d, "_count", sr.values, "", 0, strconv.FormatUint(h.count, 10))
		}
	}
	return b.Flush()
}

// writeSample writes one line: the name with its suffix, the labels by
// name, then extra (a histogram's le) last, as client_golang wrote it.
func writeSample(b *bufio.Writer, d *Desc, suffix string, values []string, extra string, extraValue float64, value string) {
	b.WriteString(d.name + suffix)
	sep := byte('{')
	for _, i := range d.order {
		b.WriteByte(sep)
		b.WriteString(d.labels[i] + `="`)
		valueEscaper.WriteString(b, values[i])
		b.WriteByte('"')
		sep = ','
	}
	if extra != "" {
		b.WriteByte(sep)
		b.WriteString(extra + `="` + formatFloat(extraValue) + `"`)
		sep = ','
	}
	if sep == ',' {
		b.WriteByte('}')
	}
	b.WriteString(" " + value + "\n")
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Handler serves the registry's text to every GET, gzipped for a
// scraper that accepts it as Prometheus does.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		var out io.Writer = w
		if acceptsGzip(req.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			defer gz.Close()
			out = gz
		}
		// An error here is the scraper gone: nothing more can reach it.
		_ = r.WriteText(out)
	})
}

func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(coding) == "gzip" && strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

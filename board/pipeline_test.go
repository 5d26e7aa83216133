package board_test

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

// svgDoc is the part of the pipeline's drawing the test reads back.
type svgDoc struct {
	Paths []struct {
		Class string `xml:"class,attr"`
		D     string `xml:"d,attr"`
		Title string `xml:"title"`
	} `xml:"path"`
	Groups []struct {
		Class   string `xml:"class,attr"`
		Current string `xml:"aria-current,attr"`
		Title   string `xml:"title"`
		Rect    struct {
			X int `xml:"x,attr"`
			W int `xml:"width,attr"`
		} `xml:"rect"`
	} `xml:"g"`
}

var svgRE = regexp.MustCompile(`(?s)<svg class="pipeline".*?</svg>`)

// drawnPipeline is the issue page's drawing of its flow, parsed as XML
// (which it must be, inline in HTML).
func drawnPipeline(t *testing.T, r *rig, id int) svgDoc {
	t.Helper()
	code, body := r.get(t, "/issues/"+itoa(id))
	require.Equal(t, http.StatusOK, code, body)
	src := svgRE.FindString(body)
	require.NotEmpty(t, src, "the page draws the pipeline: %s", body)
	var doc svgDoc
	require.NoError(t, xml.Unmarshal([]byte(src), &doc), src)
	return doc
}

// The issue page draws every stage of the flow in order with the issue's
// place marked, every move of the stage machine once (forward past a
// stage on the right, back on the left), and the moves the issue took.
func TestTheIssuePageDrawsThePipeline(t *testing.T) {
	r := newRig(t)
	iss := r.create(t, "Add login page", "implementation_review")
	code, body := r.post(t, "/issues/1/reject", url.Values{"csrf": {r.csrf(t, iss.ID)}, "message": {"the form needs labels"}}, nil)
	require.Equal(t, http.StatusOK, code, body)

	got := drawnPipeline(t, r, iss.ID)
	flow, err := r.e.Config.Flow("")
	require.NoError(t, err)
	require.Len(t, got.Groups, len(flow.Nodes), "a box per stage")
	left, right := got.Groups[0].Rect.X, got.Groups[0].Rect.X+got.Groups[0].Rect.W
	var here []string
	for i, g := range got.Groups {
		assert.True(t, strings.HasPrefix(g.Title, flow.Nodes[i].Path+":"), "box %d is %s: %q", i, flow.Nodes[i].Path, g.Title)
		if strings.Contains(g.Class, "here") {
			here = append(here, flow.Nodes[i].Path)
			assert.Equal(t, "step", g.Current)
		}
	}
	assert.Equal(t, []string{"security"}, here, "the issue is drawn where it is, and only there")

	// Each move between two stages is drawn once, on its side.
	want := map[string]bool{}
	for _, e := range r.e.Machine(flow).Edges() {
		if e.From != e.To {
			want[e.From+" → "+e.To] = true
		}
	}
	drawn := map[string]bool{}
	for _, p := range got.Paths {
		if p.Class == "" {
			continue // the arrowhead
		}
		move, kind, _ := strings.Cut(p.Title, " (")
		assert.False(t, drawn[move], "%s drawn twice", move)
		drawn[move] = true
		from, to, _ := strings.Cut(move, " → ")
		stepForward := kind == "" || kind == string(stages.MoveAdvance)+")" || kind == string(stages.MoveApprove)+")"
		assert.Equal(t, !stepForward, strings.Contains(p.Class, "dashed"), "%s: %s", p.Title, p.Class)
		if x := laneX(t, p.D); flow.Index(to) < flow.Index(from) {
			assert.Less(t, x, left, "%s is drawn left of the stages", move)
		} else if flow.Index(to) > flow.Index(from)+1 {
			assert.Greater(t, x, right, "%s is drawn right of the stages", move)
		}
	}
	assert.Equal(t, want, drawn)

	var taken []string
	for _, p := range got.Paths {
		if strings.Contains(p.Class, "taken") {
			taken = append(taken, p.Title)
		}
	}
	assert.Equal(t, []string{"implementation_review → security (reject)"}, taken)
}

// laneX is the x of a path's vertical run: the lane an arc takes, or the
// middle of the boxes for a straight step down.
func laneX(t *testing.T, d string) int {
	t.Helper()
	f := strings.Fields(d)
	for i, w := range f {
		if strings.HasPrefix(w, "V") {
			prev := f[i-1]
			if strings.HasPrefix(prev, "H") {
				prev = prev[1:]
			} else {
				prev = f[i-2][1:] // "M x y V…": the M's x
			}
			x, err := strconv.Atoi(prev)
			require.NoError(t, err, d)
			return x
		}
	}
	t.Fatalf("no vertical run in %q", d)
	return 0
}

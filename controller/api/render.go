package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/report"
)

// render turns the typed result of a request to route into what the
// command prints and the code it exits with, as a person's CLI prints the
// engine's results: report.Printer, in plain text (no colour, warnings in
// line), or the result as indented JSON when the request asks for it.
// Routes without a typed result answer with their output as it is.
func render(route string, req any, resp *Response) (Output, error) {
	var b bytes.Buffer
	p := report.Printer{Out: &b, ErrOut: &b}
	switch route {
	case RouteNext:
		var nr NextResult
		if err := decodeResult(route, resp, &nr); err != nil {
			return Output{}, err
		}
		r, _ := deref[NextRequest](req)
		switch {
		case nr.Done != nil:
			d := nr.Done
			fmt.Fprintf(&b, "issue %d: this request was already done: %s → %s (%s); it is now at %s\n", d.Issue, d.From, d.To, d.Kind, d.Stage)
			return Output{Text: b.String()}, nil
		case nr.Result == nil:
			return Output{}, fmt.Errorf("the controller's answer to %s holds no result", route)
		case r.JSON:
			if err := printJSON(&b, nr.Result); err != nil {
				return Output{}, err
			}
		default:
			p.Result(nr.Result)
		}
		return Output{Text: b.String(), ExitCode: int(report.Code(nr.Result))}, nil
	case RouteCreate:
		var iss issues.Issue
		if err := decodeResult(route, resp, &iss); err != nil {
			return Output{}, err
		}
		if r, _ := deref[CreateRequest](req); r.JSON {
			if err := printJSON(&b, &iss); err != nil {
				return Output{}, err
			}
		} else {
			p.Created(&iss)
		}
		return Output{Text: b.String()}, nil
	case RouteShow:
		var s report.Shown
		if err := decodeResult(route, resp, &s); err != nil {
			return Output{}, err
		}
		if s.Issue == nil {
			return Output{}, fmt.Errorf("the controller's answer to %s holds no issue", route)
		}
		if r, _ := deref[ShowRequest](req); r.JSON {
			if err := printJSON(&b, s.Issue); err != nil {
				return Output{}, err
			}
		} else {
			p.Issue(s)
		}
		return Output{Text: b.String()}, nil
	case RouteInbox:
		var v report.Inbox
		if err := decodeResult(route, resp, &v); err != nil {
			return Output{}, err
		}
		if r, _ := deref[InboxRequest](req); r.JSON {
			if err := printJSON(&b, &v); err != nil {
				return Output{}, err
			}
		} else {
			p.Inbox(v, time.Now())
		}
		return Output{Text: b.String()}, nil
	}
	return resp.Output, nil
}

func decodeResult(route string, resp *Response, v any) error {
	if len(resp.Result) == 0 {
		return fmt.Errorf("the controller's answer to %s holds no result: is it of another agenttree version? restart it (`agenttree controller`)", route)
	}
	// Numbers stay as sent: an issue's vars print as they were stored
	// (1000000, not 1e+06 as a float64 would).
	dec := json.NewDecoder(bytes.NewReader(resp.Result))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("reading the controller's answer to %s: %w", route, err)
	}
	return nil
}

// deref is req as an R, sent by value or by pointer.
func deref[R any](req any) (R, bool) {
	switch r := req.(type) {
	case R:
		return r, true
	case *R:
		if r != nil {
			return *r, true
		}
	}
	var zero R
	return zero, false
}

// printJSON prints v as the CLI's --json does.
func printJSON(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Package pageedit finds the edit a results row holds for the HTML page
// (report/html.Kind.Edit): the edit patch/extract takes out of the row's
// model response. It sits between the two so that the page imports no
// patch package.
package pageedit

import (
	"fmt"

	"github.com/patchbench/patchbench/patch/extract"
	"github.com/patchbench/patchbench/report/html"
)

// FromResponse returns the edit extract finds in row's "response" and
// the candidates it weighed; nil when the row has no response or none is
// found.
func FromResponse(row map[string]any) *html.Edit {
	resp, ok := row["response"].(string)
	if !ok || resp == "" {
		return nil
	}
	res, err := extract.Extract(resp)
	if res == nil {
		return nil
	}
	e := &html.Edit{}
	if err == nil && res.Text != "" {
		e.Text, e.Format, e.Source = res.Text, string(res.Format), res.Source
	}
	for _, c := range res.Candidates {
		e.Candidates = append(e.Candidates, html.Candidate{
			Kind: c.Kind, Lines: fmt.Sprintf("%d-%d", c.StartLine, c.EndLine),
			Format: string(c.Format), Chosen: c.Chosen, Reason: c.Reason,
		})
	}
	return e
}

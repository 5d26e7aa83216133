// Package docs holds the hooks that read and create the stage documents
// agents write in the issue directory (review.md, plan.md, ...):
// file_exists, section_check, has_list_items, checkbox_checked,
// field_check, min_words, contains and create_file, and title_set, which
// checks the issue's own title.
package docs

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// The parameters the document hooks share.
var (
	fileParam    = hooks.String("file", "the document, relative to the issue directory").Required()
	sectionParam = hooks.String("section",
		"narrows the check to the `##` or `###` section whose title starts with this (an exact title wins); empty: the whole document").Default("")
	onFailParam = hooks.StageRef("on_fail",
		"where a content check that fails sends the issue (a redirect) instead of blocking it; unset: it blocks", stages.MoveRedirect).
		Aliases("on_fail_stage", "on_fail_substage")
)

// Defs are the document hooks.
func Defs() []hooks.Def {
	defs := []hooks.Def{
		{HookSpec: stages.HookSpec{Name: "file_exists", Main: "file", Params: hooks.Specs(fileParam)}, Run: fileExists},
		{HookSpec: stages.HookSpec{Name: "section_check",
			Params: hooks.Specs(fileParam, sectionRequired, expectParam, onFailParam)}, Run: sectionCheck},
		{HookSpec: stages.HookSpec{Name: "has_list_items", Main: "file",
			Params: hooks.Specs(fileParam, sectionParam, minItemsParam)}, Run: hasListItems},
		{HookSpec: stages.HookSpec{Name: "checkbox_checked",
			Params: hooks.Specs(fileParam, itemParam, sectionParam, onFailParam)}, Run: checkboxChecked},
		{HookSpec: stages.HookSpec{Name: "field_check",
			Params: hooks.Specs(fileParam, fieldParam, minValueParam, maxValueParam)}, Run: fieldCheck},
		{HookSpec: stages.HookSpec{Name: "min_words", Main: "file",
			Params: hooks.Specs(fileParam, minWordsParam, sectionParam)}, Run: minWords},
		{HookSpec: stages.HookSpec{Name: "contains",
			Params: hooks.Specs(fileParam, textParam, valuesParam, sectionParam),
			OneOf:  [][]string{{textParam.Name(), valuesParam.Name()}}}, Run: containsText},
		{HookSpec: stages.HookSpec{Name: "title_set"}, Run: titleSet},
		{HookSpec: stages.HookSpec{Name: "create_file",
			Params: hooks.Specs(destParam, templateParam, contentParam),
			OneOf:  [][]string{{templateParam.Name(), contentParam.Name()}}}, Run: createFile},
	}
	for i := range defs {
		defs[i].Check = inIssueDir
	}
	return defs
}

// inIssueDir refuses, when the config is loaded, a document named
// outside the issue's directory (`file_exists: /etc/passwd`, `../x`):
// gates read the issue's documents and nothing else.
func inIssueDir(params map[string]any) error {
	var errs []error
	for _, name := range []string{fileParam.Name(), destParam.Name()} {
		if v, ok := params[name].(string); ok && !filepath.IsLocal(v) {
			errs = append(errs, fmt.Errorf("parameter `%s`: %q is not a document in the issue's directory; give a path relative to it, such as review.md", name, v))
		}
	}
	return errors.Join(errs...)
}

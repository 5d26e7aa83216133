package statuscmd

import (
	"cmp"
	"slices"

	"github.com/agenttree/agenttree/stages"
)

// sortRows orders rows: escalated ones first, then by stage in pipeline
// order, then by id. Each row's place is worked out once, and the rows,
// large values, are moved once.
func sortRows(rows []Row, rank map[string]int) []Row {
	type place struct{ escalated, rank, id, i int }
	places := make([]place, len(rows))
	for i, r := range rows {
		places[i] = place{rank: rankOf(rank, r.Stage), id: r.ID, i: i}
		if r.Escalated == nil {
			places[i].escalated = 1
		}
	}
	slices.SortFunc(places, func(a, b place) int {
		return cmp.Or(cmp.Compare(a.escalated, b.escalated), cmp.Compare(a.rank, b.rank), cmp.Compare(a.id, b.id))
	})
	sorted := make([]Row, len(rows))
	for i, p := range places {
		sorted[i] = rows[p.i]
	}
	return sorted
}

// stageRanks numbers every node of the pipeline in the order declared.
func stageRanks(cfg *stages.Config) map[string]int {
	rank := map[string]int{}
	for _, s := range cfg.Stages {
		for _, n := range s.Nodes() {
			rank[n.Path] = len(rank)
		}
	}
	return rank
}

// rankOf places stages the config does not declare, and unreadable
// issues, last.
func rankOf(rank map[string]int, stage string) int {
	if r, ok := rank[stage]; ok {
		return r
	}
	if stage == "" {
		return len(rank) + 1
	}
	return len(rank)
}

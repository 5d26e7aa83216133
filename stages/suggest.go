package stages

import "github.com/agnivade/levenshtein"

// Closest is the name of known nearest to got, if near enough to be what
// was meant (a typo: as many edits as a third of got, at most three), or
// "". Ties go to the name that sorts first. It costs a comparison per
// known name: call it only with an error to report.
func Closest(got string, known []string) string {
	best, bestDist := "", 1<<30
	for _, k := range known {
		d := levenshtein.ComputeDistance(got, k)
		if d < bestDist || (d == bestDist && k < best) {
			best, bestDist = k, d
		}
	}
	if best == "" || bestDist > min(len(got)/3+1, 3) {
		return ""
	}
	return best
}

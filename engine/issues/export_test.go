package issues

import (
	"slices"
	"time"

	"github.com/agenttree/agenttree/engine/issues/scancache"
)

// SetSettle sets how long before a Scan an issue's files must have last
// changed for the scan cache to keep them: tests wait that long, not
// scancache.SettleTime.
func SetSettle(s *Store, d time.Duration) { s.settle = d }

// ScanCachePath is where s keeps its scan cache.
func ScanCachePath(s *Store) string { return s.scanCachePath() }

// CachedIDs are the issues s's scan cache holds, in id order.
func CachedIDs(s *Store) []int {
	var ids []int
	for id := range scancache.Load(s.scanCachePath()) {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

package ghapi

import (
	"context"
	"fmt"
	"math"
)

// perPage and maxPages bound pagination: 10 pages of 100 is more checks,
// comments or review threads than any sane PR has, and a bug or a
// pathological repository must not turn one poll into hundreds of
// requests.
const (
	perPage  = 100
	maxPages = 10
)

// unknownTotal is the total of a list whose answer does not say one: the
// first short page is the last.
const unknownTotal = math.MaxInt

// paginate reads page 1, 2, ... with get, which says how many items its
// page had and how many there are in all, until a page is the last one.
func paginate(get func(page int) (got, total int, err error)) error {
	for page := 1; page <= maxPages; page++ {
		got, total, err := get(page)
		if err != nil {
			return err
		}
		if got < perPage || page*perPage >= total {
			return nil
		}
	}
	return nil
}

// listAll reads every page of the REST list at path (an endpoint that
// answers a JSON array and takes per_page and page). Each page is a
// conditional GET of its own, so an unchanged list costs no rate limit.
func listAll[T any](ctx context.Context, c *Client, op, path string) ([]T, error) {
	var all []T
	err := paginate(func(page int) (int, int, error) {
		var items []T
		err := c.get(ctx, op, fmt.Sprintf("%s?per_page=%d&page=%d", path, perPage, page), &items)
		all = append(all, items...)
		return len(items), unknownTotal, err
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

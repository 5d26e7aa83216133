package parallel

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		calls := make([]atomic.Int32, n)
		For(n, func(i int) { calls[i].Add(1) })
		for i := range calls {
			assert.Equal(t, int32(1), calls[i].Load(), "n=%d, i=%d", n, i)
		}
	}
}

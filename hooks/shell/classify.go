package shell

import (
	"regexp"
	"sync"

	"github.com/agenttree/agenttree/hooks"
)

// What a command's output says about why it failed. Free text has no
// grammar to parse; these are phrased tightly enough that the output of
// failing tests about rate limiting (test_rate_limit, TestUnauthorized)
// does not match. Rate limits are checked before auth: GitHub answers a
// secondary rate limit with 403. They are compiled on the first failure,
// not at the start of every agenttree process.
var (
	rateLimitRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)rate[ -]?limit(?:ed| exceeded| reached)|(?:exceeded|reached|hit) (?:a |the |your )?(?:\w+ )?rate[ -]?limit|` +
			`too ?many ?requests|` + httpStatus("429"))
	})
	authRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)authentication failed|permission denied \(publickey|bad credentials|\bunauthori[sz]ed\b|` +
			`403 forbidden|could not read username|invalid username or password|requires authentication|` + httpStatus("401"))
	})
)

// httpStatus matches a status code where it reads as one ("HTTP 401",
// "HTTP/2 401", "status code: 401", "error: 401"), not "401 tests passed".
func httpStatus(code string) string {
	return `(?:\bhttp(?:/[\d.]+)?|\bstatus(?: code)?|\berror|\bcode|\bresponse)\W{0,4}` + code + `\b`
}

// classify tells failures that may pass by themselves (timeouts, rate
// limits) and credential problems from the rest.
func classify(status int, output string) hooks.Class {
	switch {
	case status == 124: // timeout(1)
		return hooks.ClassTimeout
	case rateLimitRE().MatchString(output):
		return hooks.ClassRateLimit
	case authRE().MatchString(output):
		return hooks.ClassAuth
	}
	return hooks.ClassGeneral
}

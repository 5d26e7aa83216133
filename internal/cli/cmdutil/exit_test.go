package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/engine"
)

func TestResultCode(t *testing.T) {
	tests := []struct {
		res  engine.Result
		want int
	}{
		{engine.Result{Status: engine.StatusAdvanced}, exitOK},
		{engine.Result{Status: engine.StatusFinal}, exitOK},
		{engine.Result{Status: engine.StatusBlocked}, exitBlocked},
		{engine.Result{Status: engine.StatusWaiting}, exitWaiting},
		// Moved, but the new stage's entry work did not finish: not done.
		{engine.Result{Status: engine.StatusAdvanced, Unfinished: []string{"merge_pr: refused"}}, exitBlocked},
		{engine.Result{Status: engine.StatusFinal, Unfinished: []string{"merge_pr: refused"}}, exitBlocked},
		// Waiting wins: nothing the caller can fix now.
		{engine.Result{Status: engine.StatusWaiting, Unfinished: []string{"x"}}, exitWaiting},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, resultCode(&tt.res), "%+v", tt.res)
	}
}

package act_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/engine/act"
)

func TestActorFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want act.Actor
	}{
		{nil, act.Actor{Kind: act.ActorHuman}},
		{map[string]string{"AGENTTREE_ROLE": "developer"}, act.Actor{Kind: act.ActorAgent, Role: "developer"}},
		{map[string]string{"AGENTTREE_ROLE": "reviewer"}, act.Actor{Kind: act.ActorAgent, Role: "reviewer"}},
		{map[string]string{"AGENTTREE_CONTAINER": "1"}, act.Actor{Kind: act.ActorAgent, Role: "developer"}},
		{map[string]string{"AGENTTREE_ROLE": "controller"}, act.Actor{Kind: act.ActorController}},
		{map[string]string{"AGENTTREE_ROLE": "controller", "AGENTTREE_CONTAINER": "1"}, act.Actor{Kind: act.ActorAgent, Role: "controller"}},
		{map[string]string{"AGENTTREE_ROLE": "manager"}, act.Actor{Kind: act.ActorHuman}},
	}
	for _, tt := range tests {
		got := act.ActorFromEnv(func(k string) string { return tt.env[k] })
		assert.Equal(t, tt.want, got, "%v", tt.env)
	}
}

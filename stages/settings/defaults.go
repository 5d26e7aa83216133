package settings

import "github.com/agenttree/agenttree/stages"

// Defaults is a config with every setting at its default and no stages:
// what a key left out of .agenttree.yaml means.
func Defaults() *stages.Config {
	cfg := &stages.Config{}
	setDefaults(TopLevel(), cfg)
	return cfg
}

// RoleDefaults is what a `roles:` entry for role that sets nothing means.
func RoleDefaults(role stages.Role) *stages.RoleSessions {
	r := &stages.RoleSessions{Role: role}
	setDefaults(roleKeys(), r)
	return r
}

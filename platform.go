package main

import "github.com/blogql/blog/routing"

// platformConfig is the configuration of a server of many publications.
type platformConfig struct {
	// hostPattern is -platform-host-pattern.
	hostPattern routing.Pattern
}

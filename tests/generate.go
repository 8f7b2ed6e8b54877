// Package tests holds the end-to-end tests: the real HTTP handler, served
// over loopback, called through a client generated from schema.graphqls.
package tests

//go:generate go tool genqlient genqlient.yaml

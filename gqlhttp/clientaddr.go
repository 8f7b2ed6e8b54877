package gqlhttp

import "net/http"

// ClientAddress returns the address r came from as limits count it: an
// IPv4 address, or the /64 of an IPv6 one, which one host is given whole.
func ClientAddress(r *http.Request) string { return clientAddress(r) }

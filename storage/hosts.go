package storage

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"

	"github.com/blogql/blog/slugs"
)

// MaxHostLength bounds a publication's host, as DNS bounds a name.
const MaxHostLength = 253

// MaxPublicationHosts bounds the hosts of one publication.
const MaxPublicationHosts = 20

// validateHost checks a host a publication is served at: a DNS name in
// lower case, without a port or a trailing dot, of labels of a-z, 0-9 and
// inner hyphens, with at least one dot or ending in ".localhost" (which
// browsers resolve to the loopback), of at most MaxHostLength characters.
// IP addresses and wildcards are refused. A label of punycode ("xn--")
// is decoded and refused when it is not a word of one script (package
// slugs): "xn--pypal-4ve" is "pаypal" with a Cyrillic а.
func validateHost(field, h string) error {
	switch {
	case h == "":
		return invalid(field, "must not be empty")
	case len(h) > MaxHostLength:
		return invalid(field, "must be at most %d characters", MaxHostLength)
	case strings.Contains(h, "*"):
		return invalid(field, "must name one host: wildcards are not accepted")
	case strings.HasSuffix(h, "."):
		return invalid(field, "must not end with a dot")
	case strings.ContainsAny(h, ":[]"):
		if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			return invalid(field, "must be a domain name, not an IP address")
		}
		return invalid(field, "must be a host name without a port")
	case strings.ToLower(h) != h:
		return invalid(field, "must be in lower case")
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return invalid(field, "must be a domain name, not an IP address")
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return invalid(field, "must be a domain name with at least one dot, or end in .localhost")
	}
	for _, l := range labels {
		if err := validateHostLabel(l); err != nil {
			return invalid(field, "label %q %v", l, err)
		}
	}
	if isNumeric(labels[len(labels)-1]) {
		return invalid(field, "must be a domain name, not an IP address")
	}
	return nil
}

// validateHostLabel checks one label of a host.
func validateHostLabel(l string) error {
	if l == "" || len(l) > 63 {
		return fmt.Errorf("must be 1 to 63 characters")
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("must not start or end with a hyphen")
	}
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("must be of a-z, 0-9 and hyphens (write other scripts in punycode, xn--)")
		}
	}
	if !strings.HasPrefix(l, "xn--") {
		if len(l) >= 4 && l[2:4] == "--" {
			return fmt.Errorf("must not have hyphens in its 3rd and 4th characters but as xn--")
		}
		return nil
	}
	u, err := idna.Punycode.ToUnicode(l)
	if err != nil || u == l {
		return fmt.Errorf("is not valid punycode")
	}
	if err := slugs.Check(u); err != nil {
		return fmt.Errorf("reads %q, which %v", u, err)
	}
	return nil
}

// isNumeric reports whether a label is all digits: a name whose last
// label is one is an IP address in some spelling, never a domain.
func isNumeric(l string) bool {
	return strings.Trim(l, "0123456789") == ""
}

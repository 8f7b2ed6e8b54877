package routing

import (
	"fmt"
	"net/netip"
	"strings"
)

// slugMark is where a platform host pattern puts a publication's slug.
const slugMark = "{slug}"

// Pattern is the platform's host pattern, such as "{slug}.blogs.example":
// a host made of its prefix, a publication's slug and its suffix serves
// the publication of that slug without a host claim. The zero Pattern
// matches no host. It is a flag.Value.
type Pattern struct {
	prefix, suffix string
}

// ParsePattern returns the pattern of s, "" for none. It returns an error
// unless s holds {slug} once, within one label, and makes a lower-case
// DNS name with at least one dot, no port, wildcard or trailing dot, of
// labels of a-z, 0-9 and inner hyphens, not an IP address.
func ParsePattern(s string) (Pattern, error) {
	if s == "" {
		return Pattern{}, nil
	}
	prefix, suffix, ok := strings.Cut(s, slugMark)
	if !ok || strings.Contains(suffix, slugMark) {
		return Pattern{}, fmt.Errorf("%q: want {slug} once in a host name, e.g. {slug}.blogs.example", s)
	}
	// A slug too long for the pattern's label matches no host (Slug).
	if err := checkHost(prefix + "a" + suffix); err != nil {
		return Pattern{}, fmt.Errorf("%q: %w", s, err)
	}
	return Pattern{prefix: prefix, suffix: suffix}, nil
}

// checkHost checks a host a pattern makes.
func checkHost(h string) error {
	if len(h) > 253 {
		return fmt.Errorf("makes hosts longer than 253 characters")
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return fmt.Errorf("must be a domain name with at least one dot")
	}
	if _, err := netip.ParseAddr(h); err == nil || strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return fmt.Errorf("must be a domain name, not an IP address")
	}
	for _, l := range labels {
		if !isLabel(l) {
			return fmt.Errorf("label %q: must be 1 to 63 characters of a-z, 0-9 and inner hyphens (no port, wildcard or trailing dot)", l)
		}
	}
	return nil
}

// isLabel reports whether l is a DNS label: 1 to 63 characters of a-z,
// 0-9 and hyphens, neither first nor last.
func isLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Slug returns the slug of a publication a host (lower case, without a
// port) names by the pattern: false when the pattern is empty, the host
// does not match it, or what stands for the slug is not a DNS label.
func (p Pattern) Slug(host string) (string, bool) {
	if p == (Pattern{}) || !strings.HasPrefix(host, p.prefix) || !strings.HasSuffix(host, p.suffix) ||
		len(host) <= len(p.prefix)+len(p.suffix) {
		return "", false
	}
	slug := host[len(p.prefix) : len(host)-len(p.suffix)]
	if !isLabel(slug) || checkHost(host) != nil {
		return "", false
	}
	return slug, true
}

// Host returns the host the pattern makes of slug: false when the pattern
// is empty or the host would match no slug (Slug).
func (p Pattern) Host(slug string) (string, bool) {
	if p == (Pattern{}) {
		return "", false
	}
	h := p.prefix + slug + p.suffix
	if s, ok := p.Slug(h); !ok || s != slug {
		return "", false
	}
	return h, true
}

// String returns the pattern as it was written.
func (p *Pattern) String() string {
	if p == nil || *p == (Pattern{}) {
		return ""
	}
	return p.prefix + slugMark + p.suffix
}

// Set replaces the pattern with that of s (ParsePattern).
func (p *Pattern) Set(s string) error {
	q, err := ParsePattern(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

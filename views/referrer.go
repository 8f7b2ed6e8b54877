package views

import (
	"net"
	"net/url"
	"strings"
)

// maxReferrer is the longest referrer read; a longer one is dropped.
const maxReferrer = 2048

// ReferrerDomain returns the domain of the referrer URL ref, lowercased,
// without "www." and port, or "" when ref is empty or no http(s) URL of a
// host name (a forged or invalid referrer counts the view without one).
func ReferrerDomain(ref string) string {
	if ref == "" || len(ref) > maxReferrer {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if net.ParseIP(host) != nil || !isHostName(host) {
		return ""
	}
	return strings.TrimPrefix(host, "www.")
}

// isHostName reports whether h is a DNS name of two labels or more, each
// of letters, digits and inner hyphens (a punycode name is one).
func isHostName(h string) bool {
	if len(h) > 253 || !strings.Contains(h, ".") {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
				return false
			}
		}
	}
	return true
}

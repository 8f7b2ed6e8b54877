package storage

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/blogql/blog/webhooks/publicaddr"
)

// Hosts a stored link may not name unless the Store was made with
// WithPrivateHosts. The server never fetches a post's links, but the
// frontends, crawlers and link previewers that read them may, from inside
// a network the author cannot reach otherwise: a cover image at
// 169.254.169.254 asks a cloud's metadata service.

// WithPrivateHosts lets links (cover images, canonical and Open Graph
// URLs, avatars) name loopback, private and link-local hosts, as a
// development setup that serves its images from localhost needs.
func WithPrivateHosts() Option {
	return func(s *Store) { s.privateHosts = true }
}

// checkLinkHosts returns a *ValidationError on the first of links (field,
// URL pairs, each already valid as validateURL says) whose host is not
// public, or nil; a Store made WithPrivateHosts allows every host.
func (s *Store) checkLinkHosts(links ...[2]string) error {
	if s.privateHosts {
		return nil
	}
	for _, l := range links {
		if l[1] == "" {
			continue
		}
		if u, err := url.Parse(l[1]); err != nil || !publicHost(u.Hostname()) {
			return invalid(l[0], "must not name a loopback, private or link-local host")
		}
	}
	return nil
}

// publicHost reports whether host names a host on the public internet as
// far as its name tells: not localhost or a name under .localhost, and
// not an address in a loopback, private, link-local, unspecified,
// carrier-grade NAT, unique local or reserved range, in any of the
// spellings browsers read as an IPv4 address (2130706433, 0x7f.1,
// 0177.0.0.1) or as IPv6 (IPv4-mapped, NAT64, 6to4).
func publicHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		var ok bool
		if addr, ok = browserIPv4(host); !ok {
			// A name. One whose last label is a number is an address to
			// a browser, and one it cannot read is refused by it.
			return !endsInNumber(host)
		}
	}
	return publicaddr.Is(addr)
}

// endsInNumber reports whether the last label of host is a number in the
// WHATWG URL standard's sense: browsers then read the host as IPv4.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Part(last)
	return ok
}

// browserIPv4 reads host as the WHATWG URL standard's IPv4 parser does:
// one to four parts, each decimal, octal (leading 0) or hexadecimal (0x),
// the last one filling the remaining bytes.
func browserIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var n uint64
	for i, p := range parts {
		v, ok := ipv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if v > 255 {
				return netip.Addr{}, false
			}
			n = n<<8 | v
			continue
		}
		width := uint(8 * (5 - len(parts)))
		if v >= 1<<width {
			return netip.Addr{}, false
		}
		n = n<<width | v
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// ipv4Part parses one part of a browser's IPv4 address.
func ipv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	if p == "" || strings.ContainsAny(p, "+-_") {
		return 0, false
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}

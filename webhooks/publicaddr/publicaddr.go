// Package publicaddr tells the addresses of the public internet from the
// others (loopback, private, link-local, reserved…), by IANA's
// special-purpose address registries. The webhooks' dialer connects only
// to public addresses, and the store accepts links to public hosts only.
// It imports nothing of the blog, so both can use it.
package publicaddr

import "net/netip"

// What is public: an address is public when IANA's special-purpose
// address registries (RFC 6890 and its updates) do not take it out of
// the global internet. The registries' entries are written out below,
// each with its "Globally Reachable" column; the most specific entry
// that holds an address decides, so an entry marked reachable inside a
// larger one that is not (192.0.0.9 in 192.0.0.0/24) is public. Entries
// the registry marks N/A (6to4's relay anycast, Teredo) are taken as not
// reachable. Beyond the registries: IPv4 multicast, and every IPv6
// address outside 2000::/3, the one block IANA allocates as global
// unicast (site-local fec0::/10, the discard prefix, SRv6 SIDs...).
// Addresses that carry an IPv4 address (IPv4-mapped, the NAT64
// well-known prefix, 6to4) are public when the IPv4 address is.

// specialPurpose is an entry of a special-purpose registry.
type specialPurpose struct {
	prefix netip.Prefix
	global bool
}

func sp(prefix string, global bool) specialPurpose {
	return specialPurpose{netip.MustParsePrefix(prefix), global}
}

// specialPurposeRegistry lists the IPv4 and IPv6 special-purpose
// address registries' entries.
var specialPurposeRegistry = []specialPurpose{
	// IPv4.
	sp("0.0.0.0/8", false),          // "this network"
	sp("0.0.0.0/32", false),         // "this host on this network"
	sp("10.0.0.0/8", false),         // private use
	sp("100.64.0.0/10", false),      // shared address space (carrier-grade NAT)
	sp("127.0.0.0/8", false),        // loopback
	sp("169.254.0.0/16", false),     // link local (cloud metadata services)
	sp("172.16.0.0/12", false),      // private use
	sp("192.0.0.0/24", false),       // IETF protocol assignments
	sp("192.0.0.0/29", false),       // IPv4 service continuity prefix (DS-Lite)
	sp("192.0.0.8/32", false),       // IPv4 dummy address
	sp("192.0.0.9/32", true),        // port control protocol anycast
	sp("192.0.0.10/32", true),       // traversal using relays around NAT anycast
	sp("192.0.0.170/32", false),     // NAT64/DNS64 discovery
	sp("192.0.0.171/32", false),     // NAT64/DNS64 discovery
	sp("192.0.2.0/24", false),       // documentation (TEST-NET-1)
	sp("192.31.196.0/24", true),     // AS112-v4
	sp("192.52.193.0/24", true),     // automatic multicast tunneling
	sp("192.88.99.0/24", false),     // deprecated 6to4 relay anycast (N/A)
	sp("192.88.99.2/32", false),     // 6a44 relay anycast
	sp("192.168.0.0/16", false),     // private use
	sp("192.175.48.0/24", true),     // direct delegation AS112 service
	sp("198.18.0.0/15", false),      // benchmarking
	sp("198.51.100.0/24", false),    // documentation (TEST-NET-2)
	sp("203.0.113.0/24", false),     // documentation (TEST-NET-3)
	sp("240.0.0.0/4", false),        // reserved
	sp("255.255.255.255/32", false), // limited broadcast
	sp("224.0.0.0/4", false),        // multicast (a registry of its own)

	// IPv6.
	sp("::1/128", false),          // loopback
	sp("::/128", false),           // unspecified
	sp("::/96", false),            // IPv4-compatible, deprecated
	sp("::ffff:0:0/96", false),    // IPv4-mapped (read as the IPv4 address before this table)
	sp("64:ff9b::/96", true),      // IPv4-IPv6 translation (read as the IPv4 address)
	sp("64:ff9b:1::/48", false),   // local-use IPv4/IPv6 translation
	sp("100::/64", false),         // discard-only
	sp("100:0:0:1::/64", false),   // dummy IPv6 prefix
	sp("2001::/23", false),        // IETF protocol assignments
	sp("2001::/32", false),        // Teredo (N/A)
	sp("2001:1::1/128", true),     // port control protocol anycast
	sp("2001:1::2/128", true),     // traversal using relays around NAT anycast
	sp("2001:1::3/128", true),     // DNS-SD service registration protocol anycast
	sp("2001:2::/48", false),      // benchmarking
	sp("2001:3::/32", true),       // automatic multicast tunneling
	sp("2001:4:112::/48", true),   // AS112-v6
	sp("2001:10::/28", false),     // deprecated ORCHID
	sp("2001:20::/28", true),      // ORCHIDv2
	sp("2001:30::/28", true),      // drone remote ID protocol entity tags
	sp("2001:db8::/32", false),    // documentation
	sp("2002::/16", false),        // 6to4 (N/A; read as the IPv4 address)
	sp("2620:4f:8000::/48", true), // direct delegation AS112 service
	sp("3fff::/20", false),        // documentation
	sp("5f00::/16", false),        // segment routing (SRv6) SIDs
	sp("fc00::/7", false),         // unique local
	sp("fe80::/10", false),        // link-local unicast
	sp("fec0::/10", false),        // site-local, deprecated
	sp("ff00::/8", false),         // multicast
}

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// Is reports whether addr is on the public internet: globally
// reachable as IANA's special-purpose address registries say, in
// whatever form it is written (IPv4-mapped, NAT64, 6to4 read as the IPv4
// address they carry). The webhooks' dialer checks every address it
// connects to with it.
func Is(addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is6() {
		b := addr.As16()
		switch {
		case nat64.Contains(addr):
			return Is(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(addr):
			return Is(netip.AddrFrom4([4]byte(b[2:6])))
		case !globalUnicast6.Contains(addr):
			return false
		}
	}
	best := -1
	global := true
	for _, e := range specialPurposeRegistry {
		if e.prefix.Bits() > best && e.prefix.Contains(addr) {
			best, global = e.prefix.Bits(), e.global
		}
	}
	return global
}

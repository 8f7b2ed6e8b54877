package publicaddr_test

import (
	"net/netip"
	"testing"

	"github.com/blogql/blog/webhooks/publicaddr"
)

// TestIsFollowsTheSpecialPurposeRegistries takes every entry of
// IANA's IPv4 and IPv6 special-purpose address registries, at its first
// and last address and one inside: an entry the registry does not mark
// globally reachable is refused, one it does is allowed, and addresses
// that carry an IPv4 address are what that address is.
func TestIsFollowsTheSpecialPurposeRegistries(t *testing.T) {
	type entry struct {
		name  string
		addrs []string
		want  bool
	}
	for _, c := range []entry{
		// IPv4 special-purpose registry.
		{"this network 0.0.0.0/8", []string{"0.0.0.0", "0.1.2.3", "0.255.255.255"}, false},
		{"private 10.0.0.0/8", []string{"10.0.0.0", "10.1.2.3", "10.255.255.255"}, false},
		{"shared address space 100.64.0.0/10", []string{"100.64.0.0", "100.100.100.100", "100.127.255.255"}, false},
		{"loopback 127.0.0.0/8", []string{"127.0.0.0", "127.0.0.1", "127.255.255.255"}, false},
		{"link local 169.254.0.0/16", []string{"169.254.0.0", "169.254.169.254", "169.254.255.255"}, false},
		{"private 172.16.0.0/12", []string{"172.16.0.0", "172.20.1.2", "172.31.255.255"}, false},
		{"IETF protocol assignments 192.0.0.0/24", []string{"192.0.0.0", "192.0.0.100", "192.0.0.255"}, false},
		{"service continuity 192.0.0.0/29", []string{"192.0.0.1", "192.0.0.7"}, false},
		{"dummy 192.0.0.8/32", []string{"192.0.0.8"}, false},
		{"PCP anycast 192.0.0.9/32", []string{"192.0.0.9"}, true},
		{"TURN anycast 192.0.0.10/32", []string{"192.0.0.10"}, true},
		{"NAT64/DNS64 discovery 192.0.0.170/31", []string{"192.0.0.170", "192.0.0.171"}, false},
		{"documentation 192.0.2.0/24", []string{"192.0.2.0", "192.0.2.1", "192.0.2.255"}, false},
		{"AS112-v4 192.31.196.0/24", []string{"192.31.196.0", "192.31.196.1", "192.31.196.255"}, true},
		{"AMT 192.52.193.0/24", []string{"192.52.193.0", "192.52.193.1", "192.52.193.255"}, true},
		{"6to4 relay anycast 192.88.99.0/24", []string{"192.88.99.0", "192.88.99.1", "192.88.99.2", "192.88.99.255"}, false},
		{"private 192.168.0.0/16", []string{"192.168.0.0", "192.168.1.1", "192.168.255.255"}, false},
		{"AS112 direct delegation 192.175.48.0/24", []string{"192.175.48.0", "192.175.48.6", "192.175.48.255"}, true},
		{"benchmarking 198.18.0.0/15", []string{"198.18.0.0", "198.19.1.2", "198.19.255.255"}, false},
		{"documentation 198.51.100.0/24", []string{"198.51.100.0", "198.51.100.7", "198.51.100.255"}, false},
		{"documentation 203.0.113.0/24", []string{"203.0.113.0", "203.0.113.7", "203.0.113.255"}, false},
		{"reserved 240.0.0.0/4", []string{"240.0.0.0", "250.1.2.3", "255.255.255.254"}, false},
		{"limited broadcast", []string{"255.255.255.255"}, false},
		{"multicast 224.0.0.0/4", []string{"224.0.0.0", "224.0.0.1", "239.255.255.255"}, false},

		// IPv6 special-purpose registry.
		{"loopback ::1/128", []string{"::1"}, false},
		{"unspecified ::/128", []string{"::"}, false},
		{"IPv4-compatible ::/96", []string{"::8.8.8.8", "::127.0.0.1"}, false},
		{"IPv4-mapped of a private address", []string{"::ffff:0.0.0.0", "::ffff:10.0.0.1", "::ffff:192.0.2.1", "::ffff:255.255.255.255"}, false},
		{"NAT64 64:ff9b::/96 of a private address", []string{"64:ff9b::", "64:ff9b::a9fe:a9fe", "64:ff9b::192.0.2.1", "64:ff9b::ffff:ffff"}, false},
		{"local-use translation 64:ff9b:1::/48", []string{"64:ff9b:1::", "64:ff9b:1::808:808", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"}, false},
		{"discard-only 100::/64", []string{"100::", "100::1", "100::ffff:ffff:ffff:ffff"}, false},
		{"dummy 100:0:0:1::/64", []string{"100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff"}, false},
		{"IETF protocol assignments 2001::/23", []string{"2001:100::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:1::4"}, false},
		{"Teredo 2001::/32", []string{"2001::", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"PCP, TURN and DNS-SD SRP anycast 2001:1::1-3", []string{"2001:1::1", "2001:1::2", "2001:1::3"}, true},
		{"benchmarking 2001:2::/48", []string{"2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff"}, false},
		{"AMT 2001:3::/32", []string{"2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff"}, true},
		{"AS112-v6 2001:4:112::/48", []string{"2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff"}, true},
		{"deprecated ORCHID 2001:10::/28", []string{"2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"ORCHIDv2 2001:20::/28", []string{"2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff"}, true},
		{"drone remote ID 2001:30::/28", []string{"2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff"}, true},
		{"documentation 2001:db8::/32", []string{"2001:db8::", "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"6to4 2002::/16 of a private address", []string{"2002::", "2002:c000:201::1", "2002:7f00:1::", "2002:ffff:ffff::"}, false},
		{"AS112 direct delegation 2620:4f:8000::/48", []string{"2620:4f:8000::", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff"}, true},
		{"documentation 3fff::/20", []string{"3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"SRv6 SIDs 5f00::/16", []string{"5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"unique local fc00::/7", []string{"fc00::", "fd12:3456::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"link-local fe80::/10", []string{"fe80::", "fe80::1", "fe80::1%eth0", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"site-local fec0::/10", []string{"fec0::", "fec0::1", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"multicast ff00::/8", []string{"ff00::", "ff02::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, false},
		{"outside global unicast 2000::/3", []string{"4000::1", "8000::1", "e000::1", "1000::1"}, false},

		// Public addresses, in every form that carries one.
		{"public IPv4", []string{"1.1.1.1", "8.8.8.8", "192.0.1.255", "192.0.3.0", "198.17.255.255", "223.255.255.255"}, true},
		{"public IPv6", []string{"2606:4700:4700::1111", "2001:4860:4860::8888", "2001:200::1", "2a00:1450::1"}, true},
		{"public IPv4 mapped, through NAT64 or 6to4", []string{"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, a := range c.addrs {
				if got := publicaddr.Is(netip.MustParseAddr(a)); got != c.want {
					t.Errorf("Is(%s) = %v, want %v", a, got, c.want)
				}
			}
		})
	}
	if publicaddr.Is(netip.Addr{}) {
		t.Error("the zero address is public")
	}
}

package storage

import "testing"

// TestPublicHost reads hosts as browsers do: every spelling of a
// loopback, private or link-local address is not public, names and public
// addresses are.
func TestPublicHost(t *testing.T) {
	cases := map[string]bool{
		"example.com": true, "127.example.com": true, "8.8.8.8": true, "2606:4700:4700::1111": true, "xn--caf-dma.example": true,
		"localhost": false, "a.b.localhost": false, "localhost.": false,
		"127.0.0.1": false, "127.1": false, "0x7f.1": false, "0x7f000001": false, "2130706433": false, "0177.0.0.1": false,
		"017700000001": false, "127.0.0.1.": false, "0": false, "0x": false,
		"169.254.169.254": false, "10.1.2.3": false, "172.31.255.255": false, "192.168.0.1": false, "100.100.100.100": false,
		"255.255.255.255": false, "224.0.0.1": false,
		"::1": false, "::": false, "fe80::1%eth0": false, "fd12::1": false, "::ffff:10.0.0.1": false, "::ffff:8.8.8.8": true,
		"64:ff9b::a9fe:a9fe": false, "2002:7f00:1::": false, "::127.0.0.1": false,
		"256.1.1.1": false, "1.2.3.4.5": false, "example.99": false, "example.0x1g": true,
	}
	for host, want := range cases {
		if got := publicHost(host); got != want {
			t.Errorf("publicHost(%q) = %v, want %v", host, got, want)
		}
	}
}

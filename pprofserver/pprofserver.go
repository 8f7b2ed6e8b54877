// Package pprofserver serves the runtime's profiles (net/http/pprof) on a
// loopback listener apart from the API's.
package pprofserver

import (
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// Path is where the profiles are served.
const Path = "/debug/pprof/"

// CheckAddr returns an error unless addr is a loopback host and port.
// Profiles show the server's internals and cost CPU to take, so they are
// never served on a public interface: reach them through a port forward.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return errors.New("must be a loopback address such as 127.0.0.1:6060")
	}
	return nil
}

// New returns the server of the runtime profiles at Path, for a listener
// of their own.
func New() *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc(Path, pprof.Index)
	mux.HandleFunc(Path+"cmdline", pprof.Cmdline)
	mux.HandleFunc(Path+"profile", pprof.Profile)
	mux.HandleFunc(Path+"symbol", pprof.Symbol)
	mux.HandleFunc(Path+"trace", pprof.Trace)
	// No write timeout: a CPU profile or a trace takes as long as asked.
	return &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
}

package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// checkPprofAddr returns an error unless addr is a loopback host and port.
// Profiles show the server's internals and cost CPU to take, so they are
// never served on a public interface: reach them through a port forward.
func checkPprofAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return errors.New("must be a loopback address such as 127.0.0.1:6060")
	}
	return nil
}

// servePprof serves the runtime profiles at /debug/pprof/ on addr, a
// listener of their own, until ctx is done, to requests addressed to
// this machine or to allowedHosts. It returns the address it listens on,
// or the error of listening.
func servePprof(ctx context.Context, addr string, allowedHosts []string, logger *slog.Logger) (net.Addr, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// No write timeout: a CPU profile or a trace takes as long as asked.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return serveAside(ctx, "pprof", "/debug/pprof/", addr, allowedHosts, srv, logger)
}

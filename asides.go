package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/blogql/blog/httpguard"
	"github.com/blogql/blog/pprofserver"
	"github.com/blogql/blog/telemetry"
)

// serveAsides serves the runtime profiles and the metrics on their own
// listeners, where cfg asks for them.
func serveAsides(ctx context.Context, cfg *config, tel *telemetry.Telemetry, logger *slog.Logger) error {
	if cfg.pprofAddr != "" {
		if _, err := servePprof(ctx, cfg.pprofAddr, cfg.allowedHosts, logger); err != nil {
			return err
		}
	}
	if srv := tel.MetricsServer(); srv != nil {
		if _, err := serveAside(ctx, "metrics", telemetry.MetricsPath, cfg.metricsAddr, cfg.allowedHosts, srv, logger); err != nil {
			return err
		}
	}
	return nil
}

// serveAside serves srv on addr, a listener apart from the API's, until ctx
// is done, and logs the URL of path there under name. On loopback it
// answers only requests addressed to this machine or to allowedHosts
// (httpguard.Hosts). It returns the address it listens on, or the error of
// listening.
func serveAside(ctx context.Context, name, path, addr string, allowedHosts []string, srv *http.Server, logger *slog.Logger) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if httpguard.IsLoopback(ln.Addr()) {
		srv.Handler = httpguard.Hosts(allowedHosts, srv.Handler)
	}
	// A browser may open these pages too: they get the API's headers.
	srv.Handler = httpguard.SecurityHeaders(srv.Handler)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error(name+" server stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	url := "http://" + displayAddr(ln.Addr()) + path
	logger.Info(name+" at "+url, name, url)
	return ln.Addr(), nil
}

// servePprof serves the runtime profiles (package pprofserver) on addr,
// a listener of their own, until ctx is done, to requests addressed to
// this machine or to allowedHosts. It returns the address it listens on,
// or the error of listening.
func servePprof(ctx context.Context, addr string, allowedHosts []string, logger *slog.Logger) (net.Addr, error) {
	return serveAside(ctx, "pprof", pprofserver.Path, addr, allowedHosts, pprofserver.New(), logger)
}

// displayAddr returns addr as a browser would reach it: localhost for an
// address that listens on every interface.
func displayAddr(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() || ip.IsLoopback() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/blogql/blog/webhooks/publicaddr"
)

// ErrForbiddenAddress is the error of a delivery to an address off the
// public internet, as publicaddr.Is says: loopback, private,
// link-local (cloud metadata at 169.254.169.254 included), documentation,
// reserved and every other range IANA's special-purpose registries do not
// mark globally reachable, in any IPv4-mapped or embedded form. Its
// message is also what a name that does not resolve gets (see describe).
var ErrForbiddenAddress = errors.New("the host does not resolve to a public address")

// maxResponseBytes is how much of an answer is read (and dropped), so the
// connection can be reused and a huge answer costs nothing.
const maxResponseBytes = 64 << 10

// guard refuses a connection to address unless it is public; the
// dialer calls it with the resolved address it is about to connect to,
// whatever name resolved to it and however.
func guard(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if !publicaddr.Is(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// newClient returns the HTTP client of deliveries: no proxy (it would
// connect for us, past the guard), no redirects followed (a 3xx is an
// answer that is not 2xx), and, unless allowPrivate, the guard on every
// address it dials. resolve, when set, resolves names instead of the
// system's resolver (tests).
func newClient(allowPrivate bool, resolve func(ctx context.Context, host string) ([]netip.Addr, error)) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = guard
	}
	dial := d.DialContext
	if resolve != nil {
		dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			addrs, err := resolve(ctx, host)
			if err != nil {
				return nil, err
			}
			if len(addrs) == 0 {
				return nil, fmt.Errorf("resolve %s: no address", host)
			}
			var errs []error
			for _, a := range addrs {
				c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
				if err == nil {
					return c, nil
				}
				errs = append(errs, err)
			}
			return nil, errors.Join(errs...)
		}
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dial,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 15 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// answer is what an endpoint made of one attempt.
type answer struct {
	status     int // 0: no answer
	retryAfter time.Duration
	duration   time.Duration
	err        string
}

// post sends body to url, signed with secrets, as the message id at the
// time ts, within timeout.
func (s *Service) post(ctx context.Context, url, id string, secrets []string, ts time.Time, body []byte) answer {
	sig, err := Sign(secrets, id, ts, body)
	if err != nil {
		return answer{err: "the webhook's secret cannot sign"}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return answer{err: "the URL cannot be requested"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "blog-webhooks/1")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return answer{duration: time.Since(start), err: describe(err)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	a := answer{status: resp.StatusCode, duration: time.Since(start)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		a.err = fmt.Sprintf("redirect to %q not followed", truncate(resp.Header.Get("Location"), 200))
	default:
		a.err = "HTTP " + strconv.Itoa(resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			a.retryAfter = retryAfter(resp.Header.Get("Retry-After"), s.opts.Now())
		}
	}
	return a
}

// describe returns what the history says of a failed request: enough to
// act on, without the request's details. A name that does not resolve
// and one that resolves to an address off the public internet get the
// same words, so a webhook's history (and pingWebhook) cannot tell an
// admin which internal names exist.
func describe(err error) string {
	var (
		ne     net.Error
		dnsErr *net.DNSError
	)
	switch {
	case errors.Is(err, ErrForbiddenAddress) || errors.As(err, &dnsErr):
		return ErrForbiddenAddress.Error()
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timed out"
	}
	return "the connection failed"
}

// retryAfter reads a Retry-After header, seconds or an HTTP date, at
// now; 0 when it says nothing usable.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return min(time.Duration(n)*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

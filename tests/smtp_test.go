package tests

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"html"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// smtpServer is an SMTP server on loopback that speaks STARTTLS and takes
// AUTH PLAIN only over TLS, and keeps what it receives.
type smtpServer struct {
	addr     string
	port     int
	rootCAs  *x509.CertPool
	user     string
	password string

	mu       sync.Mutex
	received []smtpMessage
	// refuse, when set, answers RCPT TO with it.
	refuse *smtp.SMTPError
	// open takes mail without AUTH (and so without TLS), as a relay on
	// loopback does.
	open bool
	// gate, when set, is called with the recipient and the data of a
	// message before it is taken: it may hold it, and an error refuses
	// it, as the answer to the final dot.
	gate func(to string, data []byte) error
	// conns are the connections opened so far, in order.
	conns []*smtp.Conn
}

// smtpMessage is one message as the server got it.
type smtpMessage struct {
	from, to string
	tls      bool
	data     []byte
	// at is when the server took it.
	at time.Time
}

func newSMTPServer(t testing.TB) *smtpServer {
	t.Helper()
	cert, pool := selfSigned(t)
	ss := &smtpServer{rootCAs: pool, user: "blog", password: "smtp-password"}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if !slices.Contains(ss.conns, c) { // a session starts again after STARTTLS
			ss.conns = append(ss.conns, c)
		}
		return &smtpSession{srv: ss, conn: c}, nil
	}))
	srv.Domain = "127.0.0.1"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.AllowInsecureAuth = false // AUTH only after STARTTLS
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	ss.addr = ln.Addr().String()
	ss.port = ln.Addr().(*net.TCPAddr).Port
	return ss
}

// messages returns what the server received so far.
func (ss *smtpServer) messages() []smtpMessage {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]smtpMessage(nil), ss.received...)
}

// sessions returns how many connections were opened so far.
func (ss *smtpServer) sessions() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.conns)
}

// dropSessions closes every session opened so far, as a server does
// with those left idle too long.
func (ss *smtpServer) dropSessions() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.conns {
		_ = c.Close()
	}
}

func (ss *smtpServer) setRefuse(e *smtp.SMTPError) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.refuse = e
}

type smtpSession struct {
	srv    *smtpServer
	conn   *smtp.Conn
	authed bool
	from   string
	to     string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if user != s.srv.user || password != s.srv.password {
			return errors.New("bad credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed && !s.srv.open {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	if s.srv.refuse != nil {
		return s.srv.refuse
	}
	s.to = to
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if s.srv.gate != nil {
		if err := s.srv.gate(s.to, b); err != nil {
			return err
		}
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	s.srv.received = append(s.srv.received, smtpMessage{from: s.from, to: s.to, tls: isTLS, data: b, at: time.Now()})
	return nil
}

func (s *smtpSession) Reset()        {}
func (s *smtpSession) Logout() error { return nil }

// selfSigned returns a certificate for 127.0.0.1 and the pool that trusts
// it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// parsedEmail is a received email as a mail reader shows it.
type parsedEmail struct {
	header     mail.Header
	text, html string
}

// parseEmail parses a received message: its headers and its two parts,
// multipart/alternative, plain text and HTML, decoded.
func parseEmail(t *testing.T, data []byte) parsedEmail {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q, want multipart/alternative", m.Header.Get("Content-Type"))
	}
	e := parsedEmail{header: m.Header}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(p) // quoted-printable is decoded by NextPart
		if err != nil {
			t.Fatal(err)
		}
		switch ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); ct {
		case "text/plain":
			e.text = string(b)
		case "text/html":
			e.html = string(b)
		}
	}
	if e.text == "" || e.html == "" {
		t.Fatalf("the email lacks a part: text %q, html %q", e.text, e.html)
	}
	return e
}

var (
	textLink = regexp.MustCompile(`https://blog\.test/\S+`)
	htmlLink = regexp.MustCompile(`href="([^"]+)"`)
	textCode = regexp.MustCompile(`code: (\d{6})`)
)

// signInLink returns the link and the code of a sign-in email, checking
// that both parts carry the same.
func (e parsedEmail) signInLink(t *testing.T) (string, string) {
	t.Helper()
	link := textLink.FindString(e.text)
	hm := htmlLink.FindStringSubmatch(e.html)
	if link == "" || hm == nil || html.UnescapeString(hm[1]) != link {
		t.Fatalf("links differ or are missing: text %q, html %q", link, hm)
	}
	code := textCode.FindStringSubmatch(e.text)
	if code == nil || !strings.Contains(e.html, code[1]) {
		t.Fatalf("no code in both parts: %q", e.text)
	}
	return link, code[1]
}

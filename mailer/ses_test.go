package mailer_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/storage"
)

// sesStandIn is an HTTP server standing in for SES's endpoint: it keeps
// each request and answers with the status and error type it is given.
type sesStandIn struct {
	*httptest.Server
	mu       sync.Mutex
	requests []sesRequest
	status   int
	errType  string
}

type sesRequest struct {
	method, path, auth string
	body               []byte
}

func newSESStandIn(t *testing.T) *sesStandIn {
	s := &sesStandIn{status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests = append(s.requests, sesRequest{r.Method, r.URL.Path, r.Header.Get("Authorization"), body})
		w.Header().Set("Content-Type", "application/json")
		if s.status != http.StatusOK {
			w.Header().Set("X-Amzn-ErrorType", s.errType)
			w.WriteHeader(s.status)
			_, _ = io.WriteString(w, `{"message":"refused by the stand-in"}`)
			return
		}
		_, _ = io.WriteString(w, `{"MessageId":"0100-stand-in"}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sesStandIn) answer(status int, errType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.errType = status, errType
}

func (s *sesStandIn) last(t *testing.T) sesRequest {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		t.Fatal("no request reached SES")
	}
	return s.requests[len(s.requests)-1]
}

func newSES(t *testing.T, endpoint string) *mailer.SES {
	t.Helper()
	awsCfg := aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	s, err := mailer.NewSES(awsCfg, mailer.SESConfig{Region: "eu-west-1", Endpoint: endpoint, From: "Test Blog <no-reply@blog.test>"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSESSendsTheRawMessage: an email goes as one SendEmail call, signed
// with SigV4 for SES in the region, carrying the same MIME message as
// the SMTP sender (both parts, the one-click List-Unsubscribe headers, a
// Message-ID of the email's id).
func TestSESSendsTheRawMessage(t *testing.T) {
	standIn := newSESStandIn(t)
	e := storage.Email{ID: "0123abcd", To: "ann@example.com", Subject: "Letters & numbers", Text: "The text.", HTML: "<p>The HTML.</p>",
		ListUnsubscribe: "https://api.blog.test/newsletter/unsubscribe?token=t"}
	if err := newSES(t, standIn.URL).Send(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	r := standIn.last(t)
	if r.method != http.MethodPost || r.path != "/v2/email/outbound-emails" {
		t.Errorf("request = %s %s, want SendEmail (POST /v2/email/outbound-emails)", r.method, r.path)
	}
	if !strings.HasPrefix(r.auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(r.auth, "/eu-west-1/ses/aws4_request") {
		t.Errorf("Authorization = %q, want SigV4 for ses in eu-west-1", r.auth)
	}
	var in struct {
		FromEmailAddress string
		Destination      struct{ ToAddresses []string }
		Content          struct{ Raw struct{ Data string } }
	}
	if err := json.Unmarshal(r.body, &in); err != nil {
		t.Fatalf("SendEmail's body %s: %v", r.body, err)
	}
	if strings.Join(in.Destination.ToAddresses, ",") != "ann@example.com" {
		t.Errorf("ToAddresses = %v", in.Destination.ToAddresses)
	}
	raw, err := base64.StdEncoding.DecodeString(in.Content.Raw.Data)
	if err != nil {
		t.Fatalf("Content.Raw.Data is not base64: %v", err)
	}
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("the raw message: %v", err)
	}
	for h, want := range map[string]string{
		"To": "<ann@example.com>", "Subject": "Letters & numbers", "Message-Id": "<0123abcd@blog.test>",
		"List-Unsubscribe": "<" + e.ListUnsubscribe + ">", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
	} {
		if got := m.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q, want multipart/alternative", m.Header.Get("Content-Type"))
	}
	var types []string
	parts := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := parts.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		types = append(types, ct)
	}
	if strings.Join(types, " ") != "text/plain text/html" {
		t.Errorf("parts = %v, want text/plain and text/html", types)
	}
}

// TestSESFailuresAreTriedAgainOrFailForGood: throttling, a paused account
// and SES's own failures are tried again later (the error does not wrap
// ErrPermanent); a rejected message or an unverified sender fails for
// good.
func TestSESFailuresAreTriedAgainOrFailForGood(t *testing.T) {
	standIn := newSESStandIn(t)
	ses := newSES(t, standIn.URL)
	for _, c := range []struct {
		status    int
		errType   string
		permanent bool
	}{
		{http.StatusTooManyRequests, "TooManyRequestsException", false},
		{http.StatusBadRequest, "LimitExceededException", false},
		{http.StatusBadRequest, "SendingPausedException", false},
		{http.StatusInternalServerError, "InternalFailure", false},
		{http.StatusServiceUnavailable, "ServiceUnavailable", false},
		{http.StatusBadRequest, "MessageRejected", true},
		{http.StatusBadRequest, "MailFromDomainNotVerifiedException", true},
		{http.StatusBadRequest, "BadRequestException", true},
	} {
		t.Run(c.errType, func(t *testing.T) {
			standIn.answer(c.status, c.errType)
			err := ses.Send(context.Background(), storage.Email{ID: "x", To: "ann@example.com", Subject: "s", Text: "t", HTML: "h"})
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, mailer.ErrPermanent); got != c.permanent {
				t.Errorf("permanent = %v, want %v (%v)", got, c.permanent, err)
			}
		})
	}
}

package mailer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"github.com/blogql/blog/storage"
)

// SESConfig configures the Amazon SES sender.
type SESConfig struct {
	// Region is SES's region, where From is verified.
	Region string
	// Endpoint, when set, replaces SES's endpoint of Region (a VPC
	// endpoint).
	Endpoint string
	// From is the sender's address, "Blog <no-reply@example.com>".
	From string
}

// SES sends by Amazon SES's API (SendEmail), the same MIME message as
// the SMTP sender, as raw content.
type SES struct {
	client *sesv2.Client
	from   string
	domain string
}

// NewSES returns the sender of cfg with the credentials of awsCfg (the
// SDK's default chain), or an error when cfg is incomplete.
func NewSES(awsCfg aws.Config, cfg SESConfig) (*SES, error) {
	if cfg.Region == "" {
		return nil, errors.New("SES: no region")
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("SES: sender address %q: %w", cfg.From, err)
	}
	_, domain, _ := strings.Cut(from.Address, "@")
	client := sesv2.NewFromConfig(awsCfg, func(o *sesv2.Options) {
		o.Region = cfg.Region
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		// The outbox tries again, later and on any server: the SDK's own
		// retries would only hold the worker.
		o.RetryMaxAttempts = 1
	})
	return &SES{client: client, from: cfg.From, domain: domain}, nil
}

// Transport returns "ses".
func (s *SES) Transport() string { return "ses" }

// Send sends e with one SendEmail call. Throttling, a paused account,
// SES's own failures (5xx) and a network failure are tried again later;
// any other refusal (a rejected message, an unverified sender) wraps
// ErrPermanent.
func (s *SES) Send(ctx context.Context, e storage.Email) error {
	m, err := message(s.from, s.domain, e)
	if err != nil {
		return err
	}
	var raw bytes.Buffer
	if _, err := m.WriteTo(&raw); err != nil {
		return fmt.Errorf("%w: email %s: %w", ErrPermanent, e.ID, err)
	}
	_, err = s.client.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(s.from),
		Destination:      &types.Destination{ToAddresses: []string{e.To}},
		Content:          &types.EmailContent{Raw: &types.RawMessage{Data: raw.Bytes()}},
	})
	if err != nil && permanentSES(err) {
		return fmt.Errorf("%w: ses: %w", ErrPermanent, err)
	}
	if err != nil {
		return fmt.Errorf("ses: %w", err)
	}
	return nil
}

// permanentSES reports whether SES refused for good: an answer in the
// 4xx but throttling (429, TooManyRequests, LimitExceeded), a paused
// account and refused credentials (403, which an operator mends).
func permanentSES(err error) bool {
	var re *awshttp.ResponseError
	if !errors.As(err, &re) {
		return false // no answer: the network
	}
	status := re.HTTPStatusCode()
	if status >= 500 || status == 429 || status == 401 || status == 403 || status < 400 {
		return false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "TooManyRequestsException", "LimitExceededException", "ThrottlingException", "SendingPausedException":
			return false
		}
	}
	return true
}

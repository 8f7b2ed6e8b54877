package newsletter

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"strings"

	"github.com/blogql/blog/storage"
)

// KindNewsletter is the kind of the newsletter's emails in the outbox.
const KindNewsletter = "newsletter"

// maxBodyBytes bounds the post's body an email carries: a longer one
// sends its excerpt and the link, and the email stays within the outbox's
// MaxMailBodyBytes a part.
const maxBodyBytes = storage.MaxMailBodyBytes - 4<<10

// message is a post's email before it is addressed: the same for every
// member but for the unsubscribe link.
type message struct {
	subject string
	// html and text are the parts, with unsubscribeMark where the link
	// goes.
	html, text string
}

// unsubscribeMark stands for the member's unsubscribe link in a message;
// the last one of a part is the footer's, whatever the post says.
const unsubscribeMark = "__UNSUBSCRIBE_LINK__"

var emailHTML = template.Must(template.New("newsletter").Parse(`<!doctype html>
<html><body style="font-family: sans-serif; max-width: 40em; margin: auto">
<p style="color: #666">{{.Site}}</p>
<h1><a href="{{.URL}}">{{.Title}}</a></h1>
{{if .Body}}{{.Body}}{{else}}<p>{{.Excerpt}}</p>{{end}}
<p><a href="{{.URL}}">Read it on {{.Site}}</a></p>
<hr>
<p style="color: #666; font-size: small">You get this email because you are a member of {{.Site}} and get its newsletter.
<a href="{{.Unsubscribe}}">Unsubscribe</a>.</p>
</body></html>
`))

// compose returns the email of the post p: its title as the subject, its
// body (or its excerpt when the body is long) in HTML and as written, and
// its URL.
func (s *Service) compose(ctx context.Context, p *storage.Post) (*message, error) {
	site, url, err := s.opts.Site(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("newsletter of post %q: %w", p.ID, err)
	}
	body, text := template.HTML(p.BodyHTML), p.Body
	if len(p.BodyHTML) > maxBodyBytes || len(p.Body) > maxBodyBytes {
		body, text = "", p.Excerpt
	}
	var html bytes.Buffer
	data := struct {
		Site, Title, URL, Excerpt string
		Body                      template.HTML
		Unsubscribe               template.URL
	}{site, p.Title, url, p.Excerpt, body, unsubscribeMark}
	if err := emailHTML.Execute(&html, data); err != nil {
		return nil, fmt.Errorf("newsletter of post %q: %w", p.ID, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n\n%s\n\nRead it on %s: %s\n\n--\n", p.Title, strings.Repeat("=", min(len(p.Title), 72)), text, site, url)
	fmt.Fprintf(&b, "You get this email because you are a member of %s and get its newsletter.\nUnsubscribe: %s\n", site, unsubscribeMark)
	return &message{subject: p.Title, html: html.String(), text: b.String()}, nil
}

// to returns the message addressed to the member at email, whose
// unsubscribe link is link.
func (m *message) to(email, link string) storage.Email {
	return storage.Email{To: email, Subject: m.subject, Kind: KindNewsletter, ListUnsubscribe: link,
		HTML: replaceLast(m.html, unsubscribeMark, template.HTMLEscapeString(link)),
		Text: replaceLast(m.text, unsubscribeMark, link)}
}

func replaceLast(s, old, new string) string {
	i := strings.LastIndex(s, old)
	if i < 0 {
		return s
	}
	return s[:i] + new + s[i+len(old):]
}

package mailer

import (
	"bytes"
	"fmt"
	"html/template"
	"net/url"
	"time"

	"github.com/blogql/blog/storage"
)

// SignInLink returns redirectTo with the sign-in token added to its query
// as token.
func SignInLink(redirectTo, token string) (string, error) {
	u, err := url.Parse(redirectTo)
	if err != nil {
		return "", fmt.Errorf("sign-in link: %w", err)
	}
	q := u.Query()
	q.Set("token", token)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

var signInHTML = template.Must(template.New("signin").Parse(`<!doctype html>
<html><body style="font-family: sans-serif">
<p>Sign in to {{.Site}} with this link, within {{.Minutes}} minutes:</p>
<p><a href="{{.Link}}">Sign in to {{.Site}}</a></p>
<p>Or enter this code: <strong>{{.Code}}</strong></p>
<p>If you did not ask to sign in, ignore this email: nothing happens without the link or the code.</p>
</body></html>
`))

// SignIn returns the sign-in email of site (its name) with the link to
// redirectTo carrying token, and code, valid for ttl.
func SignIn(site, redirectTo, token, code string, ttl time.Duration) (storage.Email, error) {
	link, err := SignInLink(redirectTo, token)
	if err != nil {
		return storage.Email{}, err
	}
	minutes := int(ttl.Round(time.Minute) / time.Minute)
	data := struct {
		Site, Link, Code string
		Minutes          int
	}{site, link, code, minutes}
	var html bytes.Buffer
	if err := signInHTML.Execute(&html, data); err != nil {
		return storage.Email{}, fmt.Errorf("sign-in email: %w", err)
	}
	text := fmt.Sprintf("Sign in to %s with this link, within %d minutes:\n\n%s\n\nOr enter this code: %s\n\n"+
		"If you did not ask to sign in, ignore this email: nothing happens without the link or the code.\n",
		site, minutes, link, code)
	return storage.Email{Kind: "sign-in", Urgent: true, Subject: "Your sign-in link for " + site, Text: text, HTML: html.String()}, nil
}

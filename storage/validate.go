package storage

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blogql/blog/slugs"
)

// Input limits. Bodies stay far below DynamoDB's 400 KB item limit and a
// post transaction far below its 4 MB limit.
const (
	MaxTitleLength       = 200
	MaxSlugLength        = slugs.MaxRunes // characters; MaxSlugBytes bytes at most too
	MaxSlugBytes         = slugs.MaxBytes
	MaxExcerptLength     = 1000
	MaxBodyBytes         = 100_000
	MaxCommentBytes      = 10_000
	MaxNameLength        = 100
	MaxBioLength         = 2000
	MaxURLLength         = 2000
	MaxDescriptionLength = 1000
	MaxCategories        = 10
	MaxIDLength          = 64
	MaxAltLength         = 500
	MaxImageSide         = 100_000
	MaxSEODescription    = 300
)

var (
	idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// validateText checks a required or optional text that may span lines.
func validateText(field, v string, required bool, maxRunes int) error {
	switch {
	case !utf8.ValidString(v):
		return invalid(field, "must be valid UTF-8")
	case required && strings.TrimSpace(v) == "":
		return invalid(field, "must not be empty")
	case utf8.RuneCountInString(v) > maxRunes:
		return invalid(field, "must be at most %d characters", maxRunes)
	case strings.ContainsFunc(v, isHiddenControl):
		return invalid(field, "must not contain control characters other than line breaks and tabs")
	}
	return nil
}

// validateLine checks a required text of one line, such as a title or a
// name: one that lists and headings show as it is. Besides control
// characters, it refuses the line and paragraph separators (U+2028,
// U+2029), which break a line as surely, and the invisible characters
// that change the direction of text around them, which can make a title
// read as something else than what it holds.
func validateLine(field, v string, maxRunes int) error {
	if err := validateText(field, v, true, maxRunes); err != nil {
		return err
	}
	if strings.ContainsFunc(v, breaksLine) {
		return invalid(field, "must be a single line without control, line separator or text direction characters")
	}
	return nil
}

// breaksLine reports whether r has no place in one line of text: a
// control character, a line or paragraph separator, or a bidirectional
// formatting character.
func breaksLine(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}

// isHiddenControl reports whether r is a control character other than a
// line break or a tab. Such characters are invisible or garble a page, and
// JSON spells each with six bytes, which would let a body within its limit
// outgrow a DynamoDB item once it is recorded for idempotency.
func isHiddenControl(r rune) bool {
	return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t'
}

// ValidSlug reports whether s can be the slug of a post, a page, an
// author, a category, a tag or a series: words of lower-case letters,
// marks and digits of any script joined by single hyphens, in NFC, of at
// most MaxSlugLength characters and MaxSlugBytes bytes, no word mixing
// look-alike scripts (package slugs). Every slug of a-z, 0-9 and single
// hyphens, as slugs were before, is one.
func ValidSlug(s string) bool { return slugs.Check(s) == nil }

func validateSlug(field, v string) error {
	if err := slugs.Check(v); err != nil {
		return invalid(field, "%v", err)
	}
	return nil
}

// ValidID reports whether id can be the id of an author: 1 to MaxIDLength
// characters of A-Z a-z 0-9 _ -.
func ValidID(id string) bool { return validateID("id", id) == nil }

func validateID(field, v string) error {
	if len(v) == 0 || len(v) > MaxIDLength || !idPattern.MatchString(v) {
		return invalid(field, "must be 1 to %d characters of A-Z, a-z, 0-9, _ and -", MaxIDLength)
	}
	return nil
}

// validateURL checks an optional link that pages put in an href or src:
// only absolute http and https URLs, so no javascript: or data: link gets
// in, and none that carries credentials. It must read back as itself
// once parsed (a lower-case scheme, non-ASCII characters percent-encoded,
// so every reader of it finds the same host and path), and hold no space,
// control or text direction character and no character that ends an HTML
// attribute or tag (" < > ` \): a frontend that writes it into a page
// unescaped, or shows it, shows what it is. Its host is checked by
// Store.checkLinkHosts.
func validateURL(field, v string) error {
	if v == "" {
		return nil
	}
	bad := invalid(field, "must be an absolute http or https URL of at most %d characters, percent-encoded, without spaces, quotes, angle brackets or credentials", MaxURLLength)
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxURLLength || strings.ContainsFunc(v, badInURL) {
		return bad
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || u.User != nil || u.String() != v {
		return bad
	}
	// url.Parse takes any digits as a port; a browser takes 1 to 65535
	// written without leading zeros, and no colon without a port.
	if port := u.Port(); port != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return bad
		}
	}
	return nil
}

// badInURL reports whether r has no place in a stored link.
func badInURL(r rune) bool {
	return unicode.IsSpace(r) || breaksLine(r) || r > unicode.MaxASCII || strings.ContainsRune("\"<>`\\", r)
}

// validateOptLine checks an optional text of one line: empty, or as
// validateLine.
func validateOptLine(field, v string, maxRunes int) error {
	if v == "" {
		return nil
	}
	return validateLine(field, v, maxRunes)
}

// validateImage checks a picture: its URL as validateURL and required, its
// text alternative one line, its size in pixels 0 (unknown) or positive.
func validateImage(field string, img *Image) error {
	if img == nil {
		return nil
	}
	if img.URL == "" {
		return invalid(field+".url", "must not be empty")
	}
	return firstErr(
		validateURL(field+".url", img.URL),
		validateOptLine(field+".alt", img.Alt, MaxAltLength),
		validateSide(field+".width", img.Width),
		validateSide(field+".height", img.Height),
	)
}

func validateSide(field string, px int) error {
	if px < 0 || px > MaxImageSide {
		return invalid(field, "must be between 1 and %d pixels", MaxImageSide)
	}
	return nil
}

// validateSEO checks SEO fields: the title and description one line, the
// URLs as validateURL. Empty fields are unset.
func validateSEO(seo SEO) error {
	return firstErr(
		validateOptLine("seo.title", seo.Title, MaxTitleLength),
		validateOptLine("seo.description", seo.Description, MaxSEODescription),
		validateURL("seo.canonicalUrl", seo.CanonicalURL),
		validateURL("seo.ogImage", seo.OGImage),
	)
}

// validateBody checks a text that may be long, by its size in bytes.
func validateBody(field, v string, maxBytes int) error {
	switch {
	case !utf8.ValidString(v):
		return invalid(field, "must be valid UTF-8")
	case len(v) > maxBytes:
		return invalid(field, "must be at most %d bytes", maxBytes)
	case strings.ContainsFunc(v, isHiddenControl):
		return invalid(field, "must not contain control characters other than line breaks and tabs")
	}
	return nil
}

// validateCategories checks the slugs and returns them without duplicates,
// in the order given.
func validateCategories(slugs []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, s := range slugs {
		if err := validateSlug("categories", s); err != nil {
			return nil, err
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) > MaxCategories {
		return nil, invalid("categories", "must be at most %d", MaxCategories)
	}
	return out, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

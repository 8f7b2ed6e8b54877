package syndication

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"time"
)

// The three formats, written with encoding/xml and encoding/json, which
// escape every text and attribute (bodies go into CDATA in RSS, escaped
// text in Atom, a JSON string in JSON Feed). github.com/gorilla/feeds
// v1.2.0 was tried first and left: its Atom feed has no rel="self" link
// and its id is the home page's URL, its entries no published date and
// no categories that Atom accepts (a bare <category> element), its RSS
// no atom:link to itself and names (not addresses) in <author>, and its
// JSON Feed items with an excerpt only have neither content_html nor
// content_text, which JSON Feed requires.

// RSS 2.0 (https://www.rssboard.org/rss-specification), with the
// content, Dublin Core and Atom namespaces for the full body, the author's
// name and the link to itself.

type rss struct {
	XMLName xml.Name   `xml:"rss"`
	Version string     `xml:"version,attr"`
	Content string     `xml:"xmlns:content,attr"`
	DC      string     `xml:"xmlns:dc,attr"`
	Atom    string     `xml:"xmlns:atom,attr"`
	Channel rssChannel `xml:"channel"`
}

type rssChannel struct {
	Title         string    `xml:"title"`
	Link          string    `xml:"link"`
	Description   string    `xml:"description"`
	Self          atomLink  `xml:"atom:link"`
	LastBuildDate string    `xml:"lastBuildDate"`
	Generator     string    `xml:"generator"`
	Items         []rssItem `xml:"item"`
}

type rssItem struct {
	Title       string        `xml:"title"`
	Link        string        `xml:"link"`
	GUID        rssGUID       `xml:"guid"`
	PubDate     string        `xml:"pubDate"`
	Creator     string        `xml:"dc:creator,omitempty"`
	Categories  []rssCategory `xml:"category"`
	Description string        `xml:"description"`
	Content     *cdata        `xml:"content:encoded"`
	Enclosure   *rssEnclosure `xml:"enclosure"`
}

type rssGUID struct {
	IsPermaLink string `xml:"isPermaLink,attr"`
	ID          string `xml:",chardata"`
}

type rssCategory struct {
	Domain string `xml:"domain,attr,omitempty"`
	Name   string `xml:",chardata"`
}

type cdata struct {
	Text string `xml:",cdata"`
}

// rssEnclosure is a post's cover. RSS requires a length in bytes, which
// the blog does not know without fetching the image: 0, as the RSS
// Advisory Board's best practices ask when the size is unknown.
type rssEnclosure struct {
	URL    string `xml:"url,attr"`
	Length string `xml:"length,attr"`
	Type   string `xml:"type,attr"`
}

const generator = "blogql"

func encodeRSS(h *Handler, f *feed) ([]byte, error) {
	doc := rss{
		Version: "2.0",
		Content: "http://purl.org/rss/1.0/modules/content/",
		DC:      "http://purl.org/dc/elements/1.1/",
		Atom:    "http://www.w3.org/2005/Atom",
		Channel: rssChannel{
			Title:         f.Title,
			Link:          f.HomeURL,
			Description:   f.Description,
			Self:          atomLink{Href: f.SelfURL, Rel: "self", Type: "application/rss+xml"},
			LastBuildDate: f.Updated.UTC().Format(time.RFC1123Z),
			Generator:     generator,
		},
	}
	for _, it := range f.Items {
		ri := rssItem{
			Title:       it.Title,
			Link:        it.URL,
			GUID:        rssGUID{IsPermaLink: "false", ID: it.ID},
			PubDate:     it.Published.Format(time.RFC1123Z),
			Creator:     it.Author.Name,
			Description: excerptHTML(it.Summary),
		}
		for _, c := range it.Categories {
			ri.Categories = append(ri.Categories, rssCategory{Name: c.Name, Domain: h.link(h.opts.Paths.CategoryPath(c.Slug))})
		}
		if it.HTML != "" {
			ri.Content = &cdata{Text: it.HTML}
		}
		if it.Image != nil && it.Image.Type != "" {
			ri.Enclosure = &rssEnclosure{URL: it.Image.URL, Length: "0", Type: it.Image.Type}
		}
		doc.Channel.Items = append(doc.Channel.Items, ri)
	}
	return marshalXML(doc)
}

// Atom 1.0 (RFC 4287).

type atomFeed struct {
	XMLName  xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	ID       string      `xml:"id"`
	Title    string      `xml:"title"`
	Subtitle string      `xml:"subtitle,omitempty"`
	Updated  string      `xml:"updated"`
	Links    []atomLink  `xml:"link"`
	Author   *atomPerson `xml:"author"`
	// Generator names the software, as Atom allows.
	Generator string      `xml:"generator"`
	Entries   []atomEntry `xml:"entry"`
}

type atomLink struct {
	Href  string `xml:"href,attr"`
	Rel   string `xml:"rel,attr,omitempty"`
	Type  string `xml:"type,attr,omitempty"`
	Title string `xml:"title,attr,omitempty"`
}

type atomPerson struct {
	Name string `xml:"name"`
	URI  string `xml:"uri,omitempty"`
}

type atomEntry struct {
	ID         string         `xml:"id"`
	Title      string         `xml:"title"`
	Links      []atomLink     `xml:"link"`
	Published  string         `xml:"published"`
	Updated    string         `xml:"updated"`
	Author     atomPerson     `xml:"author"`
	Categories []atomCategory `xml:"category"`
	Summary    *atomText      `xml:"summary"`
	Content    *atomText      `xml:"content"`
}

type atomCategory struct {
	Term  string `xml:"term,attr"`
	Label string `xml:"label,attr,omitempty"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

func encodeAtom(_ *Handler, f *feed) ([]byte, error) {
	doc := atomFeed{
		ID:       f.ID,
		Title:    f.Title,
		Subtitle: f.Description,
		Updated:  f.Updated.UTC().Format(time.RFC3339),
		Links: []atomLink{
			{Href: f.SelfURL, Rel: "self", Type: "application/atom+xml"},
			{Href: f.HomeURL, Rel: "alternate", Type: "text/html"},
		},
		Generator: generator,
	}
	if f.Author != nil {
		doc.Author = &atomPerson{Name: f.Author.Name, URI: f.Author.URL}
	}
	for _, it := range f.Items {
		e := atomEntry{
			ID:        it.ID,
			Title:     it.Title,
			Links:     []atomLink{{Href: it.URL, Rel: "alternate", Type: "text/html"}},
			Published: it.Published.Format(time.RFC3339),
			Updated:   it.Updated.Format(time.RFC3339),
			Author:    atomPerson{Name: it.Author.Name, URI: it.Author.URL},
			Summary:   &atomText{Type: "text", Text: it.Summary},
		}
		if it.Author.Name == "" {
			e.Author.Name = f.Title
		}
		for _, c := range it.Categories {
			e.Categories = append(e.Categories, atomCategory{Term: c.Slug, Label: c.Name})
		}
		if it.HTML != "" {
			e.Content = &atomText{Type: "html", Text: it.HTML}
		}
		if it.Image != nil {
			e.Links = append(e.Links, atomLink{Href: it.Image.URL, Rel: "enclosure", Type: it.Image.Type, Title: it.Image.Alt})
		}
		doc.Entries = append(doc.Entries, e)
	}
	return marshalXML(doc)
}

func marshalXML(v any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/).

type jsonFeed struct {
	Version     string       `json:"version"`
	Title       string       `json:"title"`
	HomePageURL string       `json:"home_page_url"`
	FeedURL     string       `json:"feed_url"`
	Description string       `json:"description,omitempty"`
	Authors     []jsonAuthor `json:"authors,omitempty"`
	Items       []jsonItem   `json:"items"`
}

type jsonAuthor struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

type jsonItem struct {
	ID            string       `json:"id"`
	URL           string       `json:"url"`
	Title         string       `json:"title"`
	ContentHTML   string       `json:"content_html,omitempty"`
	ContentText   *string      `json:"content_text,omitempty"`
	Summary       string       `json:"summary,omitempty"`
	Image         string       `json:"image,omitempty"`
	DatePublished string       `json:"date_published"`
	DateModified  string       `json:"date_modified"`
	Authors       []jsonAuthor `json:"authors,omitempty"`
	Tags          []string     `json:"tags,omitempty"`
}

// JSONFeedVersion is the version URL a JSON Feed starts with.
const JSONFeedVersion = "https://jsonfeed.org/version/1.1"

func encodeJSON(_ *Handler, f *feed) ([]byte, error) {
	doc := jsonFeed{
		Version:     JSONFeedVersion,
		Title:       f.Title,
		HomePageURL: f.HomeURL,
		FeedURL:     f.SelfURL,
		Description: f.Description,
		Items:       []jsonItem{},
	}
	if f.Author != nil {
		doc.Authors = []jsonAuthor{{Name: f.Author.Name, URL: f.Author.URL}}
	}
	for _, it := range f.Items {
		ji := jsonItem{
			ID:            it.ID,
			URL:           it.URL,
			Title:         it.Title,
			ContentHTML:   it.HTML,
			Summary:       it.Summary,
			DatePublished: it.Published.Format(time.RFC3339),
			DateModified:  it.Updated.Format(time.RFC3339),
		}
		if ji.ContentHTML == "" {
			// JSON Feed requires content_html or content_text, even empty.
			ji.ContentText = &it.Summary
		}
		if it.Author.Name != "" {
			ji.Authors = []jsonAuthor{{Name: it.Author.Name, URL: it.Author.URL}}
		}
		for _, c := range it.Categories {
			ji.Tags = append(ji.Tags, c.Name)
		}
		if it.Image != nil {
			ji.Image = it.Image.URL
		}
		doc.Items = append(doc.Items, ji)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

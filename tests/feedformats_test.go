package tests

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

// Parsing the three feed formats in tests, with types of their own: what
// a reader of each format gets out of a feed.

// What the tests read of each format, declared apart from the server's
// own types.
type (
	rssDoc struct {
		XMLName xml.Name `xml:"rss"`
		Version string   `xml:"version,attr"`
		Channel struct {
			// Self comes before Link, which would take atom:link too.
			Self struct {
				Href string `xml:"href,attr"`
				Rel  string `xml:"rel,attr"`
			} `xml:"http://www.w3.org/2005/Atom link"`
			Title         string `xml:"title"`
			Link          string `xml:"link"`
			Description   string `xml:"description"`
			LastBuildDate string `xml:"lastBuildDate"`
			Items         []struct {
				Title string `xml:"title"`
				Link  string `xml:"link"`
				GUID  struct {
					PermaLink string `xml:"isPermaLink,attr"`
					ID        string `xml:",chardata"`
				} `xml:"guid"`
				PubDate     string   `xml:"pubDate"`
				Creator     string   `xml:"http://purl.org/dc/elements/1.1/ creator"`
				Categories  []string `xml:"category"`
				Description string   `xml:"description"`
				Content     string   `xml:"http://purl.org/rss/1.0/modules/content/ encoded"`
				Enclosure   *struct {
					URL    string `xml:"url,attr"`
					Length string `xml:"length,attr"`
					Type   string `xml:"type,attr"`
				} `xml:"enclosure"`
			} `xml:"item"`
		} `xml:"channel"`
	}
	atomLinkDoc struct {
		Href string `xml:"href,attr"`
		Rel  string `xml:"rel,attr"`
		Type string `xml:"type,attr"`
	}
	atomDoc struct {
		XMLName xml.Name      `xml:"http://www.w3.org/2005/Atom feed"`
		ID      string        `xml:"id"`
		Title   string        `xml:"title"`
		Updated string        `xml:"updated"`
		Links   []atomLinkDoc `xml:"link"`
		Entries []struct {
			ID        string        `xml:"id"`
			Title     string        `xml:"title"`
			Links     []atomLinkDoc `xml:"link"`
			Published string        `xml:"published"`
			Updated   string        `xml:"updated"`
			Author    struct {
				Name string `xml:"name"`
				URI  string `xml:"uri"`
			} `xml:"author"`
			Categories []struct {
				Term  string `xml:"term,attr"`
				Label string `xml:"label,attr"`
			} `xml:"category"`
			Summary string `xml:"summary"`
			Content *struct {
				Type string `xml:"type,attr"`
				Text string `xml:",chardata"`
			} `xml:"content"`
		} `xml:"entry"`
	}
	jsonFeedDoc struct {
		Version     string `json:"version"`
		Title       string `json:"title"`
		HomePageURL string `json:"home_page_url"`
		FeedURL     string `json:"feed_url"`
		Items       []struct {
			ID            string  `json:"id"`
			URL           string  `json:"url"`
			Title         string  `json:"title"`
			ContentHTML   string  `json:"content_html"`
			ContentText   *string `json:"content_text"`
			Summary       string  `json:"summary"`
			Image         string  `json:"image"`
			DatePublished string  `json:"date_published"`
			DateModified  string  `json:"date_modified"`
			Authors       []struct {
				Name string `json:"name"`
			} `json:"authors"`
			Tags []string `json:"tags"`
		} `json:"items"`
	}
)

// feedEntry is what every format says of a post, for comparing them.
type feedEntry struct {
	id, url, title, author, html string
	published                    time.Time
	categories                   int
}

// parseFeed parses a feed of format ("feed.xml", "atom.xml" or
// "feed.json") and returns its title, its link to itself and its
// entries, failing the test on anything malformed.
func parseFeed(t *testing.T, format, body string) (title, self string, entries []feedEntry) {
	t.Helper()
	must := func(layout, s string) time.Time {
		t.Helper()
		tm, err := time.Parse(layout, s)
		if err != nil {
			t.Fatalf("%s: date %q: %v", format, s, err)
		}
		return tm
	}
	switch format {
	case "feed.xml":
		var d rssDoc
		if err := xml.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("RSS does not parse: %v\n%.500s", err, body)
		}
		equal(t, "RSS version", d.Version, "2.0")
		equal(t, "RSS self rel", d.Channel.Self.Rel, "self")
		must(time.RFC1123Z, d.Channel.LastBuildDate)
		if d.Channel.Description == "" || d.Channel.Link == "" {
			t.Errorf("RSS channel without a description or link: %+v", d.Channel)
		}
		for _, it := range d.Channel.Items {
			equal(t, "RSS guid isPermaLink", it.GUID.PermaLink, "false")
			if it.Description == "" {
				t.Errorf("RSS item %q without a description", it.Title)
			}
			if it.Enclosure != nil && (it.Enclosure.Length != "0" || !strings.HasPrefix(it.Enclosure.Type, "image/")) {
				t.Errorf("RSS enclosure %+v, want length 0 and an image type", *it.Enclosure)
			}
			entries = append(entries, feedEntry{id: it.GUID.ID, url: it.Link, title: it.Title, author: it.Creator,
				html: it.Content, published: must(time.RFC1123Z, it.PubDate), categories: len(it.Categories)})
		}
		return d.Channel.Title, d.Channel.Self.Href, entries
	case "atom.xml":
		var d atomDoc
		if err := xml.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("Atom does not parse: %v\n%.500s", err, body)
		}
		must(time.RFC3339, d.Updated)
		if !strings.HasPrefix(d.ID, "urn:uuid:") {
			t.Errorf("Atom feed id %q, want a urn:uuid:", d.ID)
		}
		for _, l := range d.Links {
			if l.Rel == "self" {
				self = l.Href
			}
		}
		for _, e := range d.Entries {
			var alt string
			for _, l := range e.Links {
				if l.Rel == "alternate" {
					alt = l.Href
				}
			}
			must(time.RFC3339, e.Updated)
			html := ""
			if e.Content != nil {
				equal(t, "Atom content type", e.Content.Type, "html")
				html = e.Content.Text
			}
			if e.Summary == "" || e.Author.Name == "" {
				t.Errorf("Atom entry %q without a summary or author", e.Title)
			}
			entries = append(entries, feedEntry{id: e.ID, url: alt, title: e.Title, author: e.Author.Name,
				html: html, published: must(time.RFC3339, e.Published), categories: len(e.Categories)})
		}
		return d.Title, self, entries
	case "feed.json":
		var d jsonFeedDoc
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("JSON Feed does not parse: %v\n%.500s", err, body)
		}
		equal(t, "JSON Feed version", d.Version, "https://jsonfeed.org/version/1.1")
		for _, it := range d.Items {
			if it.ContentHTML == "" && it.ContentText == nil {
				t.Errorf("JSON Feed item %q has neither content_html nor content_text", it.Title)
			}
			must(time.RFC3339, it.DateModified)
			e := feedEntry{id: it.ID, url: it.URL, title: it.Title, html: it.ContentHTML,
				published: must(time.RFC3339, it.DatePublished), categories: len(it.Tags)}
			if len(it.Authors) > 0 {
				e.author = it.Authors[0].Name
			}
			entries = append(entries, e)
		}
		return d.Title, d.FeedURL, entries
	}
	t.Fatalf("no format %q", format)
	return
}

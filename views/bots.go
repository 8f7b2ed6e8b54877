package views

import "strings"

// botMarks are parts of the user agents of crawlers, link previews,
// monitors, HTTP libraries and headless browsers, lowercased: a user agent
// holding one is not a reader.
var botMarks = []string{
	"bot", "crawl", "spider", "slurp", "archiver", "scraper", "fetcher",
	"headless", "phantomjs", "puppeteer", "playwright", "selenium", "webdriver",
	"lighthouse", "pagespeed", "pingdom", "uptime", "monitor", "preview",
	"facebookexternalhit", "embedly", "quora link", "whatsapp", "skypeuripreview",
	"curl/", "wget/", "python-", "go-http-client", "java/", "okhttp", "axios/",
	"node-fetch", "libwww", "httpclient", "feedfetcher", "rss", "ahrefs", "semrush",
}

// IsBot reports whether the user agent ua is a bot's: empty, or holding
// one of the marks of crawlers, libraries and headless browsers.
func IsBot(ua string) bool {
	if len(ua) < 10 {
		return true
	}
	ua = strings.ToLower(ua)
	for _, m := range botMarks {
		if strings.Contains(ua, m) {
			return true
		}
	}
	return false
}

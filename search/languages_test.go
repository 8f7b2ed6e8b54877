package search

import (
	"context"
	"testing"

	"github.com/blogql/blog/storage"
)

// localePost is a post in locale.
func localePost(id, locale, title, body string) *storage.Post {
	p := post(id, title, body)
	p.Locale = locale
	return p
}

// TestSearchInEachPostsLanguage indexes real sentences in several
// languages in one index and searches each in its own: Russian, Polish
// and German words by their stems, Japanese, Chinese and Korean by bigrams,
// English with its typo tolerance, each query finding its post first.
func TestSearchInEachPostsLanguage(t *testing.T) {
	svc := testService(t,
		localePost("en", "en", "Graceful shutdown for Go HTTP servers", "A server that stops should finish the requests it is serving."),
		localePost("ru", "ru", "Книга о базах данных", "Эта книга объясняет, как работают индексы и транзакции."),
		localePost("de", "de-DE", "Die Häuser am Fluss", "Wir haben die alten Häuser im Sommer renoviert."),
		localePost("ja", "ja", "東京の天気予報", "明日の東京は晴れのち曇りでしょう。"),
		localePost("zh", "zh-Hans", "学习中文的方法", "每天读书可以提高你的中文水平。"),
		localePost("ko", "ko", "서울 여행 안내", "서울에는 맛있는 음식점이 많습니다."),
		localePost("fr", "fr", "Les bibliothèques de la ville", "Les bibliothèques municipales prêtent des livres."),
		localePost("pl", "pl", "Przepisy na domowy chleb", "Pieczenie chleba w domu wymaga mąki, wody i cierpliwości."),
	)
	for _, c := range []struct{ query, want string }{
		{"книги", "ru"},      // plural: the stem of книга
		{"транзакция", "ru"}, // another form of транзакции
		{"Haus", "de"},       // singular of Häuser
		{"東京の天気", "ja"},      // bigrams
		{"天気予報", "ja"},
		{"中文", "zh"},
		{"서울 여행", "ko"},
		{"bibliothèque", "fr"},     // singular
		{"chlebów", "pl"},          // genitive plural of chleb: chleba's stem, two edits away
		{"domach", "pl"},           // locative plural of dom: domu's stem
		{"graceful shutdwn", "en"}, // a typo, as before locales
		{"servers", "en"},
	} {
		res, err := svc.Search(context.Background(), Request{Query: c.query, First: 5})
		if err != nil {
			t.Fatalf("%q: %v", c.query, err)
		}
		if len(res.Hits) == 0 || res.Hits[0].PostID != c.want {
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.PostID)
			}
			t.Errorf("%q found %v, want %s first", c.query, got, c.want)
		}
	}
}

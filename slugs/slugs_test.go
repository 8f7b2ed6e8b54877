package slugs

import "testing"

func TestMake(t *testing.T) {
	for _, c := range []struct {
		in    string
		latin bool
		want  string
	}{
		{"Hello, World!", false, "hello-world"},
		{"Café — 2024", false, "cafe-2024"},
		{"Straße", false, "strasse"},
		{"日本語", false, "日本語"},
		{"Привет мир", false, "привет-мир"},
		{"Привет мир", true, "privet-mir"},
		{"Γειά σου Κόσμε", true, "geia-sou-kosme"},
		{"Straße Ärger", true, "strasse-arger"},
		{"مرحبا بالعالم", false, "مرحبا-بالعالم"},
		{"Tips & Tricks", true, "tips-tricks"},
		{"Мой", false, "мой"},
		{"Мои\u0306", false, "мой"},
		{"ＦＵＬＬ width", false, "full-width"},
		{"a\u200Bb\u202Ec", false, "abc"},
		{"!!!", false, ""},
		{"東京タワーとTokyo", false, "東京タワーとtokyo"},
	} {
		if got := Make(c.in, c.latin); got != c.want {
			t.Errorf("Make(%q, %v) = %q, want %q", c.in, c.latin, got, c.want)
		}
		if c.want != "" {
			if err := Check(c.want); err != nil {
				t.Errorf("Check(%q): %v", c.want, err)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range []string{"hello-world", "a", "日本語", "привет", "café", "東京タワーとtokyo", "서울-seoul", "漢字한글", "abc-привет"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "a--b", "Hello", "p\u0430ypal", "cafe\u0301", "a\u202Eb", "a\u200Db", "a b", "a_b", "\u3164", "a/b"} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%q) = nil, want an error", bad)
		}
	}
}

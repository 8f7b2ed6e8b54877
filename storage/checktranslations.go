package storage

import (
	"fmt"
	"maps"
	"slices"
)

// checkTranslations returns every way the groups of translations and
// the posts disagree: a group of fewer than two posts, a member that is
// gone, names another group or has another locale, and a post naming a
// group that does not list it. Each group lists one post per locale by
// construction (its members are keyed by locale), so a group is
// symmetric exactly when none of these is found.
func checkTranslations(groups []*translationItem, posts map[string]*postItem) []string {
	var bad []string
	listed := map[string]string{} // post id → group id
	for _, g := range groups {
		if len(g.Members) < 2 {
			bad = append(bad, fmt.Sprintf("translation group %s has %d posts", g.ID, len(g.Members)))
		}
		for _, l := range slices.Sorted(maps.Keys(g.Members)) {
			id := g.Members[l]
			p := posts[id]
			switch {
			case p == nil:
				bad = append(bad, fmt.Sprintf("translation group %s lists post %s, which is gone", g.ID, id))
			case p.TransGroup != g.ID:
				bad = append(bad, fmt.Sprintf("translation group %s lists post %s, which names group %q", g.ID, id, p.TransGroup))
			case p.Locale != l:
				bad = append(bad, fmt.Sprintf("translation group %s lists post %s in %s, the post is in %s", g.ID, id, l, p.Locale))
			}
			if other, ok := listed[id]; ok {
				bad = append(bad, fmt.Sprintf("post %s is in translation groups %s and %s", id, other, g.ID))
			}
			listed[id] = g.ID
		}
	}
	for _, id := range slices.Sorted(maps.Keys(posts)) {
		if g := posts[id].TransGroup; g != "" && listed[id] != g {
			bad = append(bad, fmt.Sprintf("post %s names translation group %s, which does not list it", id, g))
		}
	}
	return bad
}

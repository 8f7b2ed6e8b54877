package storage

import (
	"fmt"
	"maps"
	"slices"
)

// checkTranslations returns every way the groups of translations and
// the posts and pages disagree: a group of fewer than two members, a
// member that is gone, names another group or has another locale, and a
// post or page naming a group that does not list it. A group of posts
// lists posts only, one of pages pages only. Each group lists one member
// per locale by construction (its members are keyed by locale), so a
// group is symmetric exactly when none of these is found.
func checkTranslations(groups []*translationItem, posts map[string]*postItem, pages map[string]*pageItem) []string {
	postMembers, pageMembers := map[string]*transMember{}, map[string]*transMember{}
	for id, p := range posts {
		postMembers[id] = &transMember{ID: id, Locale: p.Locale, Group: p.TransGroup}
	}
	for id, p := range pages {
		pageMembers[id] = &transMember{ID: id, Locale: p.Locale, Group: p.TransGroup}
	}
	var postGroups, pageGroups []*translationItem
	for _, g := range groups {
		if g.Kind == kindPages {
			pageGroups = append(pageGroups, g)
		} else {
			postGroups = append(postGroups, g)
		}
	}
	return append(checkGroups("post", postGroups, postMembers), checkGroups("page", pageGroups, pageMembers)...)
}

// checkGroups checks the groups of one kind against its members (what
// names them: "post" or "page").
func checkGroups(what string, groups []*translationItem, members map[string]*transMember) []string {
	var bad []string
	listed := map[string]string{} // member id → group id
	for _, g := range groups {
		if len(g.Members) < 2 {
			bad = append(bad, fmt.Sprintf("translation group %s has %d %ss", g.ID, len(g.Members), what))
		}
		for _, l := range slices.Sorted(maps.Keys(g.Members)) {
			id := g.Members[l]
			p := members[id]
			switch {
			case p == nil:
				bad = append(bad, fmt.Sprintf("translation group %s lists %s %s, which is gone", g.ID, what, id))
			case p.Group != g.ID:
				bad = append(bad, fmt.Sprintf("translation group %s lists %s %s, which names group %q", g.ID, what, id, p.Group))
			case p.Locale != l:
				bad = append(bad, fmt.Sprintf("translation group %s lists %s %s in %s, the %s is in %s", g.ID, what, id, l, what, p.Locale))
			}
			if other, ok := listed[id]; ok {
				bad = append(bad, fmt.Sprintf("%s %s is in translation groups %s and %s", what, id, other, g.ID))
			}
			listed[id] = g.ID
		}
	}
	for _, id := range slices.Sorted(maps.Keys(members)) {
		if g := members[id].Group; g != "" && listed[id] != g {
			bad = append(bad, fmt.Sprintf("%s %s names translation group %s, which does not list it", what, id, g))
		}
	}
	return bad
}

package storage

import "cmp"

// The change feed's events of a publication's staff: a membership item
// (staff.go) written is publication.member.added, .role.changed or
// .removed, naming the publication, the account and its roles before and
// after, never the address the membership keeps. Every server drops the
// role it holds of the account on them (ForgetStaff), so a member demoted
// or removed on one server loses the rights on every other within the
// change feed's lag.

// The events of a publication's staff.
const (
	EventMemberAdded       EventType = "publication.member.added"
	EventMemberRoleChanged EventType = "publication.member.role.changed"
	EventMemberRemoved     EventType = "publication.member.removed"
)

// staffEvents translates a write of a membership item: added, its role
// changed, or removed; a write that leaves the role as it was is none.
func staffEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[staffItem](r, "email")
	if err != nil {
		return err
	}
	d := EventData{PublicationID: r.pub}
	switch {
	case old == nil && cur != nil:
		d.AccountID, d.Role = cur.AccountID, cur.Role
		add(EventMemberAdded, d)
	case old != nil && cur == nil:
		d.AccountID, d.PreviousRole = old.AccountID, old.Role
		add(EventMemberRemoved, d)
	case old != nil && old.Role != cur.Role:
		d.AccountID, d.Role, d.PreviousRole = cur.AccountID, cur.Role, old.Role
		add(EventMemberRoleChanged, d)
	}
	return nil
}

// ForgetStaff drops the role this server holds of each account that
// events change the staff membership of (an event without a publication
// is the default publication's), whichever publication's Store it is
// called on, as ForgetSite does the site settings. The change feed calls
// it with every batch it tails.
func (s *Store) ForgetStaff(events []LoggedEvent) {
	for _, e := range events {
		switch e.Type {
		case EventMemberAdded, EventMemberRoleChanged, EventMemberRemoved:
		default:
			continue
		}
		pub := cmp.Or(e.Publication, DefaultPublication)
		if pub == s.ks.ID() {
			s.staff.forget(e.Data.AccountID)
		}
		if c := s.pubs.staffCacheOf(pub); c != nil {
			c.forget(e.Data.AccountID)
		}
	}
}

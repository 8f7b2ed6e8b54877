package storage

// Cursors of lists kept outside the table. The search index (package
// search) pages its results with cursors sealed like every other list's,
// with the table's cursor key, so a cursor from one server is good on
// another and a client cannot alter or forge one.

// SealCursor returns the opaque cursor of the position pos in the list
// named list.
func (s *Store) SealCursor(list string, pos map[string]string) string {
	return s.encodeCursor(list, pos)
}

// OpenCursor returns the position a cursor from SealCursor of list holds,
// or nil for an empty cursor; anything else (altered, of another list or
// another key) is a *ValidationError on field, the argument that carried
// it.
func (s *Store) OpenCursor(list, field, cursor string) (map[string]string, error) {
	return s.position(list, field, cursor)
}

package views

// memory remembers the day's visitors and counts its clients within a
// bound: two generations of at most half the bound each. When the current
// one is full it becomes the previous one, and the previous one is
// forgotten, so memory stays within the bound however many visitors a day
// brings, and what is forgotten is the oldest: a visitor first seen more
// than half the bound of visitors ago may be counted again.
type memory struct {
	half      int
	cur, prev map[uint64]int
}

func newMemory(bound int) *memory {
	return &memory{half: max(1, bound/2), cur: map[uint64]int{}, prev: map[uint64]int{}}
}

// get returns what is remembered of h: how many times it was added.
func (m *memory) get(h uint64) int { return m.cur[h] + m.prev[h] }

// add adds one to h, forgetting the oldest generation when the current
// one is full.
func (m *memory) add(h uint64) {
	if _, ok := m.cur[h]; !ok && len(m.cur) >= m.half {
		m.prev, m.cur = m.cur, map[uint64]int{}
	}
	m.cur[h]++
}

package graph

import (
	"fmt"
	"sync"

	"github.com/blogql/blog/storage"
)

// Commenter hints: who wrote a post's page of comments, as this server
// last read it, so that the next post page reads them beside the post and
// the comments instead of after the comments (commentsAhead): the post
// page then takes two round trips, the slug's reservation and then the
// rest together, instead of three.
//
// A hint names whom to read, never what to answer: every writer shown is
// read in the request, from the table. A writer the page gained since the
// hint was kept is read once the comments are in, in one BatchGetItem of
// the missing writers only (the one request the page makes beyond its
// budget, once, until the hint is kept again); a writer it lost was read
// for nothing. Hints are bounded (maxHintedWritersInAll writers in all,
// at most maxHintedWriters a page, arbitrary pages dropped to make room:
// about 300 KB) and belong to one Resolver, that is one publication, of
// the router's bounded number.

// maxHintedWritersInAll bounds the writers remembered of all pages.
const maxHintedWritersInAll = 4096

// maxHintedWriters bounds the writers remembered of a page: those that
// one BatchGetItem reads.
const maxHintedWriters = 100

// commenterHints holds the writers of pages of comments by commentersKey.
type commenterHints struct {
	mu      sync.Mutex
	pages   map[string][]storage.Writer
	writers int // in all pages
}

func newCommenterHints() *commenterHints {
	return &commenterHints{pages: map[string][]storage.Writer{}}
}

// commentersKey names the writers that a page p of the comments of the
// post with postID shows: those of its comments when own, and those of
// their first replies when replies.
func commentersKey(postID string, p storage.PageArgs, own, replies bool) string {
	return fmt.Sprintf("%s|%t|%t", commentsKey(postID, p), own, replies)
}

// get returns the writers remembered under key, or nil.
func (h *commenterHints) get(key string) []storage.Writer {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pages[key]
}

// put remembers writers under key, or forgets key when there are none or
// more than maxHintedWriters.
func (h *commenterHints) put(key string, writers []storage.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writers -= len(h.pages[key])
	delete(h.pages, key)
	if len(writers) == 0 || len(writers) > maxHintedWriters {
		return
	}
	for k, w := range h.pages {
		if h.writers+len(writers) <= maxHintedWritersInAll {
			break
		}
		h.writers -= len(w)
		delete(h.pages, k)
	}
	h.pages[key] = writers
	h.writers += len(writers)
}

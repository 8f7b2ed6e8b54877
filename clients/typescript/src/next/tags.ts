// The API's cache tags as Next.js takes them. The API names what each
// public answer shows in its Surrogate-Key header (space-separated) and in
// Cache-Tag (comma-separated), within 8 KB: when a long list's tags pass
// that, the most numerous kind of tags gives way to its section tag. A
// Next.js cache entry takes fewer, 128 tags of at most 256 characters,
// so the same rule fits them to that.

/** The most tags Next.js keeps on one cache entry (NEXT_CACHE_TAG_MAX_ITEMS). */
export const maxTags = 128;

/** The longest tag Next.js keeps (NEXT_CACHE_TAG_MAX_LENGTH); the API's tags are far shorter. */
export const maxTagLength = 256;

/** The section tag of each kind of tag: every event naming a tag of the kind names it too. */
const sections: Record<string, string> = {
  'post:': 'feed',
  'archive:': 'feed',
  'author:': 'authors',
  'category:': 'categories',
  'tag:': 'tags',
  'page:': 'pages',
  'series:': 'series',
  'comments:': 'comments',
  'counts:': 'counts',
};

/**
 * sectionTag returns the tag every event naming tag names too, so purging
 * it reaches whatever showed tag; a tag of no kind (feed, site, search, a
 * section) is its own section.
 */
export function sectionTag(tag: string): string {
  const colon = tag.indexOf(':');
  return (colon >= 0 && sections[tag.slice(0, colon + 1)]) || tag;
}

/**
 * answerTags returns the cache tags of an API answer, from its
 * Surrogate-Key header or else its Cache-Tag header; none when the answer
 * is not public (it shows something no purge reaches).
 */
export function answerTags(headers: Headers): string[] {
  const surrogate = headers.get('Surrogate-Key');
  if (surrogate !== null) {
    return surrogate.split(' ').filter(Boolean);
  }
  return (headers.get('Cache-Tag') ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/**
 * fitTags returns tags, sorted and without duplicates, when there are at
 * most max of them; else, kind after kind, the most numerous first, the
 * tags of a kind replaced by its section tag until they fit, as the API
 * fits its headers. A purge of a section tag reaches every answer that
 * showed a tag of its kind, so the entry is never kept past a write it
 * shows; it is only purged more often. Tags longer than Next.js takes
 * give way to their section tag too.
 */
export function fitTags(tags: Iterable<string>, max = maxTags): string[] {
  let fitted = [...new Set(Array.from(tags, (t) => (t.length > maxTagLength ? sectionTag(t) : t)))].sort();
  while (fitted.length > max) {
    const counts = new Map<string, number>();
    for (const t of fitted) {
      const s = sectionTag(t);
      if (s !== t) {
        counts.set(s, (counts.get(s) ?? 0) + 1);
      }
    }
    let best = '';
    for (const [s, n] of counts) {
      const bestCount = counts.get(best) ?? 0;
      if (n > bestCount || (n === bestCount && s < best)) {
        best = s;
      }
    }
    if (best === '') {
      // Only section tags are left: more than max of them cannot happen
      // with the API's kinds, but never hand Next.js more than it keeps.
      return fitted.slice(0, max);
    }
    fitted = [...new Set(fitted.map((t) => (sectionTag(t) === best ? best : t)))].sort();
  }
  return fitted;
}

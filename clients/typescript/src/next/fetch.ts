// The typed client's requests the Next.js way: Next.js's fetch options on
// each request, and each cache entry tagged with the tags of the answers it
// holds, so the webhook route (webhook.ts) purges exactly what a write
// changed.
//
// Why 'use cache' and cacheTag: Next.js takes a fetch's tags
// (`next: { tags }`) before the request is sent, and the API says what an
// answer shows only in the answer (its Surrogate-Key header): a post page
// fetched by slug shows post:<id>, author:<id>, category:<slug>… which the
// slug does not tell. unstable_cache takes its tags up front too. Next.js
// 16's cacheTag (with `cacheComponents: true`) tags the cache entry of the
// 'use cache' function it runs in, at any time before the function
// returns, so the tags can come from the answer: nextEndpoint's fetch
// calls it with each answer's tags.
/// <reference types="next" />
import { cacheLife, cacheTag } from 'next/cache';
import type { Endpoint, Fetch } from '../client';
import { answerTags, fitTags } from './tags';

/** What nextEndpoint passes to Next.js with each request. */
export interface NextEndpointOptions {
  /**
   * Tag each cache entry with the tags of the answers it holds (cacheTag)
   * and keep an answer no tag purges only as long as its Cache-Control
   * says (cacheLife). True by default: call the client inside a
   * 'use cache' function then, as Next.js allows cacheTag nowhere else.
   */
  tagFromAnswer?: boolean;
  /** Tags of your own, added to each request's fetch (`next.tags`). */
  tags?: string[];
  /** Seconds Next.js's fetch cache keeps an answer (`next.revalidate`); false: until purged. */
  revalidate?: number | false;
  /** The fetch's cache mode; unset, Next.js's default for the route. */
  cache?: RequestCache;
}

/**
 * nextEndpoint returns the endpoint at url (the API's /graphql) whose
 * requests carry Next.js's fetch options and, by default, tag the
 * enclosing 'use cache' function's entry with each answer's cache tags:
 *
 *   async function post(slug: string) {
 *     'use cache';
 *     return postPage(nextEndpoint(process.env.BLOG_API!), slug);
 *   }
 *
 * Outside a 'use cache' function, pass `{ tagFromAnswer: false }`: Next.js
 * throws when cacheTag is called there.
 */
export function nextEndpoint(url: string, options: NextEndpointOptions = {}): Endpoint {
  const { tagFromAnswer = true, tags, revalidate, cache } = options;
  const next: NextFetchRequestConfig = {};
  if (tags !== undefined) {
    next.tags = tags;
  }
  if (revalidate !== undefined) {
    next.revalidate = revalidate;
  }
  const fetchAnswer: Fetch = async (input, init) => {
    const response = await fetch(input, { ...init, next, ...(cache === undefined ? {} : { cache }) });
    if (tagFromAnswer) {
      tagEntry(response.headers);
    }
    return response;
  };
  return { url, fetch: fetchAnswer };
}

/**
 * tagEntry tags the current 'use cache' entry with an answer's tags. A
 * private answer shows something no event purges (liveCursor, node): the
 * entry then lives no longer than the answer's max-age, which makes
 * Next.js render it at request time rather than into a static page. A
 * no-store answer sets nothing: it is an error (request throws, so
 * nothing is cached; a persisted query's first miss is sent again), a
 * mutation's or a preview's, none of which belongs in a 'use cache'
 * function.
 */
function tagEntry(headers: Headers): void {
  const tags = answerTags(headers);
  if (tags.length > 0) {
    cacheTag(...fitTags(tags));
    return;
  }
  const cacheControl = headers.get('Cache-Control') ?? '';
  if (/(?:^|[,\s])private(?:$|[,\s])/.test(cacheControl)) {
    const seconds = Number(/(?:^|[,\s])max-age=(\d+)/.exec(cacheControl)?.[1] ?? 0);
    cacheLife({ stale: seconds, revalidate: seconds, expire: seconds });
  }
}

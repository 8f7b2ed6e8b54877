import { type Endpoint, GraphQLRequestError, request } from './client';
import type { NavigationFragment, PageLinksFragment, PostStatus, PostSummaryFragment } from './gql/graphql';
import {
  AuthorPageQuery,
  CategoryPageQuery,
  CreatePreviewLinkMutation,
  MonthArchiveQuery,
  PostPageQuery,
  PreviewPageQuery,
  PublishPostMutation,
  SearchPageQuery,
  StaticPageQuery,
  TagPageQuery,
} from './operations';

// What the frontend's pages render, built from the typed results. A schema
// change that removes, renames or retypes a field used here fails tsc.
// URLs: /posts/<slug>, /authors/<slug>, /categories/<slug>,
// /archive/<yyyy>/<mm>, /preview/<token>, /search?q=<words>&category=<slug>, /tags/<slug>,
// and static pages at /<slug>:
// pages and posts share one namespace of slugs, so /<slug> never names
// both, and a route for /<slug> serves pages only.

/** A picture with its text alternative and, when known, its size. */
export interface Picture {
  src: string;
  alt: string;
  width: number | null;
  height: number | null;
}

/** A post in a listing. */
export interface PostCard {
  href: string;
  title: string;
  excerpt: string;
  byline: { href: string; name: string };
  /** Every author of the post, its primary author first: "Grace Hopper, Ada Lovelace and Alan Turing". */
  bylines: { href: string; name: string }[];
  date: string;
  readingTime: string;
  cover: Picture | null;
  categories: { href: string; name: string }[];
  tags: { href: string; name: string }[];
  comments: string;
}

/** Where a cursor takes a listing: to the page after it or before it. */
export type PageCursor = { after: string } | { before: string };

/** A page of posts, newest first, with the cursors of the newer and older pages, if any. */
export interface Listing {
  heading: string;
  intro: string;
  total: string;
  posts: PostCard[];
  newer: PageCursor | null;
  older: PageCursor | null;
}

/** A link to a month of an archive. */
export interface MonthLink {
  href: string;
  label: string;
  count: string;
}

/** Who wrote a comment, as the post page shows them. */
export interface Byline {
  name: string;
  avatar: string | null;
  /** True for the blog's authors, false for readers. */
  isAuthor: boolean;
}

/** A comment with its first replies, as the post page shows it. */
export interface Thread {
  by: Byline | null;
  body: string;
  at: string;
  replies: { by: Byline | null; body: string; at: string }[];
  /** How many more replies "show more" would load, and from which cursor. */
  moreReplies: { count: number; after: string | null } | null;
}

/** What the page's head says to search engines and link previews. */
export interface Meta {
  title: string;
  description: string;
  canonical: string | null;
  image: string | null;
}

/** An entry of a table of contents, linking to its heading. */
export interface TocEntry {
  href: string;
  label: string;
  depth: number;
}

/** The post page. */
export interface PostView {
  card: PostCard;
  meta: Meta;
  /** Sanitized by the API: insert it as it is. */
  html: string;
  /** What the HTML needs from the page around it. */
  needs: HtmlNeeds;
  toc: TocEntry[];
  words: string;
  version: number;
  previous: { href: string; title: string } | null;
  next: { href: string; title: string } | null;
  threads: Thread[];
  moreComments: string | null;
}

/**
 * What a body's HTML needs from its page: the origins of its embedded
 * players, for the page's Content-Security-Policy frame-src, and whether
 * it holds code highlighted by the API, whose theme codeStylesheet links.
 */
export interface HtmlNeeds {
  frameSources: string[];
  highlightedCode: boolean;
}

/** embedOrigins are the origins of the only players the API embeds. */
export const embedOrigins = ['https://www.youtube-nocookie.com', 'https://player.vimeo.com', 'https://codepen.io'];

/** htmlNeeds returns what the HTML of a body needs from its page. */
export function htmlNeeds(html: string): HtmlNeeds {
  return {
    frameSources: embedOrigins.filter((o) => html.includes(`<iframe src="${o}/`)),
    highlightedCode: html.includes('<pre class="chroma">'),
  };
}

/**
 * codeStylesheet returns the URL of the theme of highlighted code that the
 * API at endpoint (its /graphql URL) serves: one of chroma's styles.
 */
export function codeStylesheet(endpoint: string, style = 'github'): string {
  return new URL(`/code.css?style=${encodeURIComponent(style)}`, endpoint).toString();
}

/** A page reached by an old URL answers with a redirect to the current one. */
export type Routed<T> = { redirect: string } | { page: T };

/** The author page. */
export interface AuthorView {
  listing: Listing;
  avatar: string | null;
  months: MonthLink[];
}

/** The month archive page. */
export interface ArchiveView {
  listing: Listing;
  months: MonthLink[];
}

/** A draft or scheduled post as a reviewer sees it. */
export interface PreviewView {
  banner: string;
  card: PostCard;
  html: string;
  toc: TocEntry[];
}

/** A search result: its post's card, and its title and a passage of its body with the matches marked. */
export interface SearchHit {
  card: PostCard;
  /** Escaped by the API, with <mark> around the matches and no other markup: insert it as it is. */
  titleHtml: string;
  /** Escaped by the API, with <mark> around the matches and no other markup: insert it as it is. */
  snippetHtml: string;
}

/** A category to narrow a search to, with how many results it holds. */
export interface SearchFacetLink {
  href: string;
  name: string;
  count: string;
  current: boolean;
}

/** The search results page. */
export interface SearchView {
  heading: string;
  total: string;
  hits: SearchHit[];
  facets: SearchFacetLink[];
  /** The cursor of the next page of results ("more results"), if any. */
  more: string | null;
  /** What to tell the reader instead of results: a query refused, or the index not ready. */
  notice: string | null;
}

const pageSize = 20;

export function date(iso: string): string {
  return new Date(iso).toLocaleDateString('en', { dateStyle: 'medium' });
}

export function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

export function byline(c: { name: string; avatarUrl?: string | null; isAuthor: boolean } | null | undefined): Byline | null {
  return c ? { name: c.name, avatar: c.avatarUrl ?? null, isAuthor: c.isAuthor } : null;
}

export function card(post: PostSummaryFragment): PostCard {
  const cover = post.coverImage;
  return {
    href: `/posts/${post.slug}`,
    title: post.title,
    excerpt: post.excerpt,
    byline: { href: `/authors/${post.author.slug}`, name: post.author.name },
    date: post.publishedAt ? date(post.publishedAt) : '',
    readingTime: `${post.readingTimeMinutes} min read`,
    cover: cover ? { src: cover.url, alt: cover.alt, width: cover.width ?? null, height: cover.height ?? null } : null,
    categories: post.categories.map((c) => ({ href: `/categories/${c.slug}`, name: c.name })),
    bylines: post.authors.map((a) => ({ href: `/authors/${a.slug}`, name: a.name })),
    tags: post.tags.map((t) => ({ href: `/tags/${t.slug}`, name: t.name })),
    comments: plural(post.commentCount, 'comment'),
  };
}

/** pageLinks returns where the links to the newer and older pages of a newest-first list go. */
export function pageLinks(info: PageLinksFragment): { newer: PageCursor | null; older: PageCursor | null } {
  return {
    newer: info.hasPreviousPage && info.startCursor ? { before: info.startCursor } : null,
    older: info.hasNextPage && info.endCursor ? { after: info.endCursor } : null,
  };
}

export function cursorVariables(
  cursor: PageCursor | null,
): { first: number; after: string | null } | { last: number; before: string } {
  if (cursor && 'before' in cursor) {
    return { last: pageSize, before: cursor.before };
  }
  return { first: pageSize, after: cursor?.after ?? null };
}

function monthLinks(months: { year: number; month: number; postCount: number }[]): MonthLink[] {
  return months.map((m) => ({
    href: `/archive/${m.year}/${String(m.month).padStart(2, '0')}`,
    label: new Date(Date.UTC(m.year, m.month - 1, 1)).toLocaleDateString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' }),
    count: plural(m.postCount, 'post'),
  }));
}

function tocEntries(toc: { level: number; text: string; anchor: string }[]): TocEntry[] {
  return toc.map((h) => ({ href: `#${h.anchor}`, label: h.text, depth: h.level }));
}

/** notFound returns null for a NOT_FOUND answer and throws any other error. */
export async function notFound<T>(answer: Promise<T>): Promise<T | null> {
  try {
    return await answer;
  } catch (e) {
    if (e instanceof GraphQLRequestError && e.code === 'NOT_FOUND') {
      return null;
    }
    throw e;
  }
}

/** categoryPage returns a page of a category's posts, or null when there is no such category. */
export async function categoryPage(endpoint: Endpoint, slug: string, cursor: PageCursor | null): Promise<Listing | null> {
  const data = await notFound(request(endpoint, CategoryPageQuery, { slug, ...cursorVariables(cursor) }));
  if (!data?.category) {
    return null;
  }
  const { category } = data;
  const { posts } = category;
  return {
    heading: category.name,
    intro: category.description,
    total: plural(posts.totalCount, 'post'),
    posts: posts.edges.map((e) => card(e.node)),
    ...pageLinks(posts.pageInfo),
  };
}

/**
 * authorPage returns the page of the author whose URL has slug: a
 * redirect when the slug is an old one of theirs, null when no author has
 * it.
 */
export async function authorPage(endpoint: Endpoint, slug: string, after: string | null): Promise<Routed<AuthorView> | null> {
  const data = await notFound(request(endpoint, AuthorPageQuery, { slug, first: pageSize, after }));
  if (!data?.author) {
    return null;
  }
  const { author } = data;
  if (author.slug !== slug) {
    return { redirect: `/authors/${author.slug}` };
  }
  return {
    page: {
      listing: {
        heading: author.name,
        intro: author.bio,
        total: plural(author.postCount, 'post'),
        posts: author.posts.edges.map((e) => card(e.node)),
        ...pageLinks(author.posts.pageInfo),
      },
      avatar: author.avatarUrl ?? null,
      months: monthLinks(author.archive),
    },
  };
}

/** archivePage returns the posts of the blog published in a month (UTC), with links to every month that has posts. */
export async function archivePage(endpoint: Endpoint, year: number, month: number, after: string | null): Promise<ArchiveView> {
  const publishedAfter = new Date(Date.UTC(year, month - 1, 1)).toISOString();
  const publishedBefore = new Date(Date.UTC(year, month, 1)).toISOString();
  const { archive, posts } = await request(endpoint, MonthArchiveQuery, {
    publishedAfter,
    publishedBefore,
    first: pageSize,
    after,
  });
  return {
    listing: {
      heading: new Date(publishedAfter).toLocaleDateString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' }),
      intro: '',
      total: plural(posts.totalCount, 'post'),
      posts: posts.edges.map((e) => card(e.node)),
      ...pageLinks(posts.pageInfo),
    },
    months: monthLinks(archive),
  };
}

/** searchHref returns the URL of the search results page for query, in category when given. */
export function searchHref(query: string, category: string | null): string {
  const params = new URLSearchParams({ q: query });
  if (category) {
    params.set('category', category);
  }
  return `/search?${params.toString()}`;
}

/** searchNotices are what the search page tells a reader for the errors a query may get. */
const searchNotices: Record<string, string> = {
  BAD_USER_INPUT: 'Try fewer or shorter words (at most 10 words, 200 characters).',
  SLOW_QUERY: 'Wildcards work only at the end of a word, after at least 3 letters.',
  INDEX_BUILDING: 'Search is getting ready. Try again in a moment.',
};

/**
 * searchPage returns a page of the results of query (10 a page), in
 * category when given, after the cursor after; a query the API refuses,
 * or a search while the index is being built, gives a page with a notice
 * and no results.
 */
export async function searchPage(endpoint: Endpoint, query: string, category: string | null, after: string | null): Promise<SearchView> {
  const heading = `Results for “${query}”`;
  let data;
  try {
    data = await request(endpoint, SearchPageQuery, { query, first: 10, after, category });
  } catch (e) {
    if (e instanceof GraphQLRequestError && e.code in searchNotices) {
      return { heading, total: '', hits: [], facets: [], more: null, notice: searchNotices[e.code] ?? null };
    }
    throw e;
  }
  const { search } = data;
  return {
    heading,
    total: plural(search.totalCount, 'result'),
    hits: search.edges.map(({ node }) => ({ card: card(node.post), titleHtml: node.title, snippetHtml: node.snippet })),
    facets: search.categories.map((f) => ({
      href: searchHref(query, f.slug),
      name: f.category.name,
      count: String(f.count),
      current: f.slug === category,
    })),
    more: search.pageInfo.hasNextPage ? (search.pageInfo.endCursor ?? null) : null,
    notice: search.totalCount === 0 ? 'No posts match. Check the spelling, or try other words.' : null,
  };
}

/**
 * postPage returns the post whose URL has slug with its comment threads:
 * a redirect when the slug is an old one of the post, null when there is
 * no such public post.
 */
export async function postPage(endpoint: Endpoint, slug: string): Promise<Routed<PostView> | null> {
  const data = await notFound(request(endpoint, PostPageQuery, { slug }));
  if (!data?.post) {
    return null;
  }
  const { post } = data;
  if (post.slug !== slug) {
    return { redirect: `/posts/${post.slug}` };
  }
  const { comments, seo } = post;
  return {
    page: {
      card: card(post),
      meta: { title: seo.title, description: seo.description, canonical: seo.canonicalUrl ?? null, image: seo.ogImage ?? null },
      html: post.bodyHtml,
      needs: htmlNeeds(post.bodyHtml),
      toc: tocEntries(post.toc),
      words: plural(post.wordCount, 'word'),
      version: post.version,
      previous: post.previous ? { href: `/posts/${post.previous.slug}`, title: post.previous.title } : null,
      next: post.next ? { href: `/posts/${post.next.slug}`, title: post.next.title } : null,
      threads: comments.edges.map(({ node }) => {
        const { replyConnection: replies } = node;
        return {
          by: node.deleted ? null : byline(node.commenter),
          body: node.deleted ? '[deleted]' : node.body,
          at: date(node.createdAt),
          replies: replies.edges.map(({ node: r }) => ({ by: byline(r.commenter), body: r.body, at: date(r.createdAt) })),
          moreReplies: replies.pageInfo.hasNextPage
            ? { count: replies.totalCount - replies.edges.length, after: replies.pageInfo.endCursor }
            : null,
        };
      }),
      moreComments: comments.pageInfo.hasNextPage ? comments.pageInfo.endCursor : null,
    },
  };
}

/**
 * previewPage returns the post a preview link shows, or null when the
 * link is unknown, expired or its post was deleted (the API does not say
 * which).
 */
export async function previewPage(endpoint: Endpoint, token: string): Promise<PreviewView | null> {
  const data = await notFound(request(endpoint, PreviewPageQuery, { token }));
  if (!data?.post) {
    return null;
  }
  const { post } = data;
  return {
    banner: `Preview: ${statusLabel(post.status, post.publishedAt ?? null)}`,
    card: card(post),
    html: post.bodyHtml,
    toc: tocEntries(post.toc),
  };
}

/** statusLabel names a post's status in the editor. */
export function statusLabel(status: PostStatus, publishedAt: string | null): string {
  switch (status) {
    case 'DRAFT':
      return 'Draft';
    case 'PUBLISHED':
      return publishedAt ? `Published ${date(publishedAt)}` : 'Published';
    case 'SCHEDULED':
      return publishedAt ? `Scheduled for ${date(publishedAt)}` : 'Scheduled';
    default: {
      // A status this code does not know fails type-checking here.
      const unknown: never = status;
      return unknown;
    }
  }
}

/**
 * sharePreview makes a link that shows a draft or scheduled post to a
 * reviewer without an account, for the signed-in author of token, and
 * returns its path and when it stops working.
 */
export async function sharePreview(
  endpoint: Endpoint,
  token: string,
  postId: string,
  days: number,
): Promise<{ href: string; expires: string }> {
  const { createPreviewLink } = await request(
    endpoint,
    CreatePreviewLinkMutation,
    { input: { postId, expiresIn: days * 24 * 3600 } },
    token,
  );
  return { href: `/preview/${createPreviewLink.token}`, expires: date(createPreviewLink.expiresAt) };
}

/**
 * publish publishes a post now, or schedules it when at is in the future,
 * as the signed-in author of token, and returns the editor's new status
 * line and the post's new version.
 */
export async function publish(
  endpoint: Endpoint,
  token: string,
  id: string,
  expectedVersion: number,
  at: Date | null,
): Promise<{ label: string; version: number }> {
  const { publishPost } = await request(
    endpoint,
    PublishPostMutation,
    { input: { id, expectedVersion, at: at?.toISOString() ?? null } },
    token,
  );
  const { post } = publishPost;
  return { label: statusLabel(post.status, post.publishedAt ?? null), version: post.version };
}

/** A link of the site's navigation, with the links listed under it. */
export interface NavLink {
  href: string;
  label: string;
  children: NavLink[];
}

/** The layout every page shares: the site's name and its navigation. */
export interface Layout {
  title: string;
  description: string;
  lang: string;
  logo: string | null;
  nav: NavLink[];
}

/** A static page (About, Contact), in the layout. */
export interface StaticPageView {
  layout: Layout;
  meta: Meta;
  title: string;
  /** Sanitized by the API: insert it as it is. */
  html: string;
  toc: TocEntry[];
  updated: string;
}

/**
 * layout builds the navigation from the site's "main" menu when it has
 * one, else from the published pages, each under its parent (a parent
 * that is not among them makes a page top level).
 */
export function layout(nav: NavigationFragment): Layout {
  const { site, pages } = nav;
  const menu = site.menus.find((m) => m.name === 'main');
  let links: NavLink[];
  if (menu) {
    // A link of a kind this code does not know shows by its label and path.
    links = menu.items.filter((i) => i.path).map((i) => ({ href: i.path ?? '', label: i.label, children: [] }));
  } else {
    const nodes = pages.edges.map((e) => e.node);
    const byId = new Map(nodes.map((p) => [p.id, { href: `/${p.slug}`, label: p.title, children: [] as NavLink[] }]));
    links = [];
    for (const p of nodes) {
      const link = byId.get(p.id)!;
      const parent = p.parentId ? byId.get(p.parentId) : undefined;
      (parent ? parent.children : links).push(link);
    }
  }
  return { title: site.title, description: site.description, lang: site.locale ?? 'en', logo: site.logoUrl ?? null, nav: links };
}

/**
 * staticPage returns the static page whose URL is /<slug> in the layout:
 * a redirect when the slug is an old one of the page, null when no public
 * page has it (a post's slug included: posts live under /posts/).
 */
export async function staticPage(endpoint: Endpoint, slug: string): Promise<Routed<StaticPageView> | null> {
  const data = await notFound(request(endpoint, StaticPageQuery, { slug }));
  if (!data?.page) {
    return null;
  }
  const { page } = data;
  if (page.slug !== slug) {
    return { redirect: `/${page.slug}` };
  }
  const { seo } = page;
  return {
    page: {
      layout: layout(data),
      meta: { title: seo.title, description: seo.description, canonical: seo.canonicalUrl ?? null, image: seo.ogImage ?? null },
      title: page.title,
      html: page.bodyHtml,
      toc: tocEntries(page.toc),
      updated: date(page.updatedAt),
    },
  };
}

/** names joins a co-authored post's byline: "Grace, Ada and Alan". */
export function names(bylines: { name: string }[]): string {
  const all = bylines.map((b) => b.name);
  return all.length < 2 ? (all[0] ?? '') : `${all.slice(0, -1).join(', ')} and ${all[all.length - 1]}`;
}

/** The tag page, /tags/<slug>: a page of its posts with their bylines, or a redirect for a tag merged into another. */
export async function tagPage(endpoint: Endpoint, slug: string, cursor: PageCursor | null): Promise<Routed<Listing> | null> {
  const data = await notFound(request(endpoint, TagPageQuery, { slug, ...cursorVariables(cursor) }));
  const tag = data?.tag;
  if (!tag) {
    return null;
  }
  if (tag.slug !== slug) {
    return { redirect: `/tags/${tag.slug}` };
  }
  return {
    page: {
      heading: `#${tag.name}`,
      intro: plural(tag.postCount, 'post'),
      total: plural(tag.posts.totalCount, 'post'),
      posts: tag.posts.edges.map((e) => card(e.node)),
      ...pageLinks(tag.posts.pageInfo),
    },
  };
}

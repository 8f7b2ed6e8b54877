import { GraphQLRequestError, request } from './client';
import type { PageLinksFragment, PostStatus, PostSummaryFragment } from './gql/graphql';
import {
  AuthorPageQuery,
  CategoryPageQuery,
  CreatePreviewLinkMutation,
  MonthArchiveQuery,
  PostPageQuery,
  PreviewPageQuery,
  PublishPostMutation,
} from './operations';

// What the frontend's pages render, built from the typed results. A schema
// change that removes, renames or retypes a field used here fails tsc.
// URLs: /posts/<slug>, /authors/<slug>, /categories/<slug>,
// /archive/<yyyy>/<mm>, /preview/<token>.

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
  date: string;
  readingTime: string;
  cover: Picture | null;
  categories: { href: string; name: string }[];
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
  toc: TocEntry[];
  words: string;
  version: number;
  previous: { href: string; title: string } | null;
  next: { href: string; title: string } | null;
  threads: Thread[];
  moreComments: string | null;
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
async function notFound<T>(answer: Promise<T>): Promise<T | null> {
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
export async function categoryPage(endpoint: string, slug: string, cursor: PageCursor | null): Promise<Listing | null> {
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
export async function authorPage(endpoint: string, slug: string, after: string | null): Promise<Routed<AuthorView> | null> {
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
export async function archivePage(endpoint: string, year: number, month: number, after: string | null): Promise<ArchiveView> {
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

/**
 * postPage returns the post whose URL has slug with its comment threads:
 * a redirect when the slug is an old one of the post, null when there is
 * no such public post.
 */
export async function postPage(endpoint: string, slug: string): Promise<Routed<PostView> | null> {
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
export async function previewPage(endpoint: string, token: string): Promise<PreviewView | null> {
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
  endpoint: string,
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
  endpoint: string,
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

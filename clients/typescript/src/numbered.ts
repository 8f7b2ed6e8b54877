import { type Endpoint, request } from './client';
import type { NumberedPostsFragment } from './gql/graphql';
import {
  NumberedAuthorPageQuery,
  NumberedCategoryPageQuery,
  NumberedMonthPageQuery,
  NumberedSeriesPageQuery,
} from './operations';
import { type PostCard, card, notFound, plural } from './pages';

// Numbered pages, for "page 3 of 7" links and static generation. Pages
// are numbered from the oldest post, so a page keeps its posts and its
// URL when newer posts are published; the newest page is the list's own
// URL and the others carry their number:
// /categories/<slug>, /categories/<slug>/page/<n>; /authors/<slug>/page/<n>;
// /series/<slug>/page/<n> (a series reads from page 1);
// /archive/<yyyy>/<mm>/page/<n>. A page past the end is no error: it
// has no posts, and the page functions return null for it, to render
// a 404.

/** A numbered page of a list, newest post first, with the links to the other pages. */
export interface NumberedListing {
  heading: string;
  intro: string;
  total: string;
  posts: PostCard[];
  /** The page's number and the list's last page (0 for a list with no posts). */
  number: number;
  totalPages: number;
  /** The URL of every page of the list, page 1 first. */
  pages: string[];
}

/** How many posts a numbered page holds: a multiple of 10 from 10 to 100. */
export const numberedPageSize = 20;

/**
 * numberedHref returns the URL of page number of the list at base, for
 * a list of totalPages pages: its newest page (the last) is base itself,
 * unless newestFirst is false (a series, read from its first page).
 */
export function numberedHref(base: string, number: number, totalPages: number, newestFirst = true): string {
  if ((newestFirst && number === totalPages) || (!newestFirst && number === 1)) {
    return base;
  }
  return `${base}/page/${number}`;
}

/**
 * numberedListing returns the listing of page, shown newest first (a
 * series: in its order), or null for a page past the end of a list that
 * has posts.
 */
function numberedListing(
  base: string,
  heading: string,
  intro: string,
  page: NumberedPostsFragment,
  newestFirst = true,
): NumberedListing | null {
  if (page.nodes.length === 0 && page.number > Math.max(page.totalPages, 1)) {
    return null;
  }
  const posts = page.nodes.map(card);
  if (newestFirst) {
    posts.reverse();
  }
  return {
    heading,
    intro,
    total: plural(page.totalCount, 'post'),
    posts,
    number: page.number,
    totalPages: page.totalPages,
    pages: Array.from({ length: page.totalPages }, (_, i) => numberedHref(base, i + 1, page.totalPages, newestFirst)),
  };
}

/** categoryNumberedPage returns page number of a category's posts, or null when there is no such category or page. */
export async function categoryNumberedPage(endpoint: Endpoint, slug: string, number: number): Promise<NumberedListing | null> {
  const data = await notFound(request(endpoint, NumberedCategoryPageQuery, { slug, number, size: numberedPageSize }));
  const category = data?.category;
  return category ? numberedListing(`/categories/${slug}`, category.name, category.description, category.postPage) : null;
}

/**
 * authorNumberedPage returns page number of an author's posts: a redirect
 * when the slug is an old one of theirs, null when no author has it or
 * the page is past the end.
 */
export async function authorNumberedPage(
  endpoint: Endpoint,
  slug: string,
  number: number,
): Promise<{ redirect: string } | { page: NumberedListing } | null> {
  const data = await notFound(request(endpoint, NumberedAuthorPageQuery, { slug, number, size: numberedPageSize }));
  const author = data?.author;
  if (!author) {
    return null;
  }
  if (author.slug !== slug) {
    return { redirect: numberedHref(`/authors/${author.slug}`, number, author.postPage.totalPages) };
  }
  const page = numberedListing(`/authors/${slug}`, author.name, author.bio, author.postPage);
  return page ? { page } : null;
}

/** seriesNumberedPage returns page number of a series in its order, or null when there is no such series or page. */
export async function seriesNumberedPage(
  endpoint: Endpoint,
  slug: string,
  number: number,
): Promise<(NumberedListing & { by: { href: string; name: string } }) | null> {
  const data = await notFound(request(endpoint, NumberedSeriesPageQuery, { slug, number, size: numberedPageSize }));
  const series = data?.series;
  if (!series) {
    return null;
  }
  const page = numberedListing(`/series/${slug}`, series.title, series.description, series.postPage, false);
  return page ? { ...page, by: { href: `/authors/${series.owner.slug}`, name: series.owner.name } } : null;
}

/** archiveNumberedPage returns page number of the posts published in a month (UTC), or null for a page past the end. */
export async function archiveNumberedPage(endpoint: Endpoint, year: number, month: number, number: number): Promise<NumberedListing | null> {
  const mm = String(month).padStart(2, '0');
  const { postPage } = await request(endpoint, NumberedMonthPageQuery, { month: `${year}-${mm}`, number, size: numberedPageSize });
  const heading = new Date(Date.UTC(year, month - 1, 1)).toLocaleDateString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });
  return numberedListing(`/archive/${year}/${mm}`, heading, '', postPage);
}

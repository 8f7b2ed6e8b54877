import { type Endpoint, request } from './client';
import { HomePageQuery, PostSeriesQuery, SeriesPageQuery } from './operations';
import { card, cursorVariables, notFound, pageLinks, plural } from './pages';
import type { Listing, PageCursor, Picture, PostCard } from './pages';

// The home page with the featured posts on top, the series page, and a
// post's place in its series. URLs: /, /series/<slug>.

/** The home page: featured posts on top, then the latest posts. */
export interface HomeView {
  featured: PostCard[];
  latest: Listing;
}

/** The series page: the series and a page of its posts, in order. */
export interface SeriesView {
  title: string;
  description: string;
  cover: Picture | null;
  by: { href: string; name: string };
  posts: PostCard[];
  newer: PageCursor | null;
  older: PageCursor | null;
}

/** A post's place in its series: "Part 2 of Learn Go", with the parts before and after. */
export interface SeriesBox {
  href: string;
  label: string;
  previous: { href: string; title: string } | null;
  next: { href: string; title: string } | null;
}

const featuredCount = 3;

/** homePage returns the home page: up to 3 featured posts, then a page of the latest. */
export async function homePage(endpoint: Endpoint, cursor: PageCursor | null): Promise<HomeView> {
  const { featuredPosts, posts } = await request(endpoint, HomePageQuery, { featured: featuredCount, ...cursorVariables(cursor) });
  return {
    featured: featuredPosts.edges.map((e) => card(e.node)),
    latest: {
      heading: 'Latest posts',
      intro: '',
      total: plural(posts.totalCount, 'post'),
      posts: posts.edges.map((e) => card(e.node)),
      ...pageLinks(posts.pageInfo),
    },
  };
}

/** seriesPage returns a page of the series with slug, in the series' order, or null when there is none. */
export async function seriesPage(endpoint: Endpoint, slug: string, cursor: PageCursor | null): Promise<SeriesView | null> {
  const data = await notFound(request(endpoint, SeriesPageQuery, { slug, ...cursorVariables(cursor) }));
  const series = data?.series;
  if (!series) {
    return null;
  }
  const { coverImage: c, posts } = series;
  const links = pageLinks(posts.pageInfo);
  return {
    title: series.title,
    description: series.description,
    cover: c ? { src: c.url, alt: c.alt, width: c.width ?? null, height: c.height ?? null } : null,
    by: { href: `/authors/${series.owner.slug}`, name: series.owner.name },
    posts: posts.edges.map((e) => card(e.node)),
    // A series reads in order: "newer" is the page before, "older" the one after.
    newer: links.newer,
    older: links.older,
  };
}

/** seriesBox returns the post's place in its series, or null when it is in none. */
export async function seriesBox(endpoint: Endpoint, slug: string): Promise<SeriesBox | null> {
  const { post } = await request(endpoint, PostSeriesQuery, { slug });
  const place = post?.series;
  if (!place) {
    return null;
  }
  const link = (p: { slug: string; title: string } | null | undefined) => (p ? { href: `/posts/${p.slug}`, title: p.title } : null);
  return {
    href: `/series/${place.series.slug}`,
    label: `Part ${place.position} of ${place.series.title}`,
    previous: link(place.previous),
    next: link(place.next),
  };
}

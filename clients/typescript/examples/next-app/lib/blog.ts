import { nextEndpoint } from '../../../src/next';
import { homePage } from '../../../src/series';
import { postPage } from '../../../src/pages';

/** The API's /graphql: BLOG_API, or the server `go run .` starts. */
export const api = process.env.BLOG_API ?? 'http://localhost:8080/graphql';

/** home returns the home page, cached until a write it shows is purged. */
export async function home() {
  'use cache';
  return homePage(nextEndpoint(api), null);
}

/** post returns a post's page by slug, cached until a write it shows is purged. */
export async function post(slug: string) {
  'use cache';
  return postPage(nextEndpoint(api), slug);
}

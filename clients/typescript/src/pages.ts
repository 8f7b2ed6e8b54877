import { request } from './client';
import type { PostStatus, PostSummaryFragment } from './gql/graphql';
import { AuthorPageQuery, CategoryPageQuery, PostPageQuery, PublishPostMutation } from './operations';

// What the frontend's pages render, built from the typed results. A schema
// change that removes, renames or retypes a field used here fails tsc.

/** A post in a listing. */
export interface PostCard {
  href: string;
  title: string;
  excerpt: string;
  byline: string;
  categories: { href: string; name: string }[];
  comments: string;
}

/** A page of posts with the cursor of the next page, if any. */
export interface Listing {
  heading: string;
  intro: string;
  total: string;
  posts: PostCard[];
  next: string | null;
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

/** The post page. */
export interface PostView {
  card: PostCard;
  markdown: string;
  version: number;
  threads: Thread[];
  moreComments: string | null;
}

const pageSize = 20;

function date(iso: string): string {
  return new Date(iso).toLocaleDateString('en', { dateStyle: 'medium' });
}

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

function byline(c: { name: string; avatarUrl?: string | null; isAuthor: boolean } | null | undefined): Byline | null {
  return c ? { name: c.name, avatar: c.avatarUrl ?? null, isAuthor: c.isAuthor } : null;
}

function card(post: PostSummaryFragment): PostCard {
  return {
    href: `/posts/${post.slug}`,
    title: post.title,
    excerpt: post.excerpt,
    byline: post.publishedAt ? `${post.author.name}, ${date(post.publishedAt)}` : post.author.name,
    categories: post.categories.map((c) => ({ href: `/categories/${c.slug}`, name: c.name })),
    comments: plural(post.commentCount, 'comment'),
  };
}

/** categoryPage returns a category's newest posts, or null when there is no such category. */
export async function categoryPage(endpoint: string, slug: string, after: string | null): Promise<Listing | null> {
  const { category } = await request(endpoint, CategoryPageQuery, { slug, first: pageSize, after });
  if (!category) {
    return null;
  }
  const { posts } = category;
  return {
    heading: category.name,
    intro: category.description,
    total: plural(posts.totalCount, 'post'),
    posts: posts.edges.map((e) => card(e.node)),
    next: posts.pageInfo.hasNextPage ? posts.pageInfo.endCursor : null,
  };
}

/** authorPage returns an author's newest posts, or null when there is no such author. */
export async function authorPage(endpoint: string, id: string, after: string | null): Promise<Listing | null> {
  const { author } = await request(endpoint, AuthorPageQuery, { id, first: pageSize, after });
  if (!author) {
    return null;
  }
  return {
    heading: author.name,
    intro: author.bio,
    total: plural(author.postCount, 'post'),
    posts: author.posts.edges.map((e) => card(e.node)),
    next: author.posts.pageInfo.hasNextPage ? author.posts.pageInfo.endCursor : null,
  };
}

/** postPage returns a post with its comment threads, or null when there is no such public post. */
export async function postPage(endpoint: string, slug: string): Promise<PostView | null> {
  const { post } = await request(endpoint, PostPageQuery, { slug });
  if (!post) {
    return null;
  }
  const { comments } = post;
  return {
    card: card(post),
    markdown: post.body,
    version: post.version,
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
 * publish publishes a post now, or schedules it when at is in the future,
 * and returns the editor's new status line and the post's new version.
 */
export async function publish(
  endpoint: string,
  id: string,
  expectedVersion: number,
  at: Date | null,
): Promise<{ label: string; version: number }> {
  const { publishPost } = await request(endpoint, PublishPostMutation, {
    input: { id, expectedVersion, at: at?.toISOString() ?? null },
  });
  const { post } = publishPost;
  return { label: statusLabel(post.status, post.publishedAt), version: post.version };
}

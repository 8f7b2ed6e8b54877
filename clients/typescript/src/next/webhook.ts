// The route handler of the blog's webhook (app/api/revalidate/route.ts):
// it verifies each delivery and revalidates exactly the pages and cache
// entries its event names.
//
//   export const POST = revalidateHandler();
//
// Create the webhook pointing at it (admins only):
//
//   mutation { createWebhook(input: {
//     url: "https://www.example.com/api/revalidate",
//     events: ["post.published", "post.published.edited", "post.unpublished", "post.deleted",
//              "post.counts.updated", "author.updated", "category.updated", "tag.updated",
//              "series.updated", "comment.added", "comment.edited", "comment.approved",
//              "comment.deleted", "page.published", "page.published.edited",
//              "page.unpublished", "page.deleted", "site.updated"] }) { secret webhook { id } } }
//
// and put the answer's secret in BLOG_WEBHOOK_SECRET. During a rotation
// (rotateWebhookSecret) the blog signs with both secrets, so switching the
// variable to the new one loses no delivery.
import { revalidatePath, revalidateTag } from 'next/cache';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** The body of a delivery: what the blog's public API shows of an event. */
export interface BlogEvent {
  type: string;
  timestamp: string;
  data?: {
    /** The frontend's pages of what changed, before and after the write. */
    paths?: string[];
    /** The tags of every cached answer that showed what changed. */
    cacheTags?: string[];
    /** Raw ids, as cache tags name them; GraphQL's id arguments take them too. */
    postId?: string;
    pageId?: string;
    /** The same ids as GraphQL answers show them (`Post.id`…). */
    graphqlIds?: {
      postId?: string;
      authorId?: string;
      coAuthors?: string[];
      commentId?: string;
      parentId?: string;
      pageId?: string;
    };
    slug?: string;
    previousSlugs?: string[];
  };
}

/** What revalidateHandler's handler does with a delivery. */
export interface RevalidateOptions {
  /** The webhook's secret (`whsec_…`); process.env.BLOG_WEBHOOK_SECRET when not given. */
  secret?: string;
  /**
   * How revalidateTag expires the entries of each tag (Next.js 16 takes a
   * cacheLife profile or `{ expire }`). The default, `{ expire: 0 }`,
   * expires them at once: the next reader waits for a fresh answer, so an
   * editor who saves and reloads sees the edit. `'max'` serves the stale
   * entry once more while Next.js fetches the fresh one.
   */
  profile?: string | { expire?: number };
}

/**
 * revalidateHandler returns a POST route handler that answers 401 unless
 * the request is a delivery signed with the secret, 500 when no secret is
 * configured, and otherwise revalidates each of the event's cacheTags
 * (revalidateTag) and paths (revalidatePath) and answers 204.
 */
export function revalidateHandler(options: RevalidateOptions = {}): (request: Request) => Promise<Response> {
  const profile = options.profile ?? { expire: 0 };
  return async (request) => {
    const secret = options.secret ?? process.env.BLOG_WEBHOOK_SECRET;
    if (!secret) {
      return new Response('BLOG_WEBHOOK_SECRET is not set', { status: 500 });
    }
    const event = await verify(request, secret);
    if (event === null) {
      return new Response('invalid signature', { status: 401 });
    }
    // Deliveries come at least once (a retry has the same webhook-id):
    // revalidating twice is harmless, so no id needs remembering. The tags
    // reach every cached answer that showed what changed (a post page
    // showing an author's new name too); the paths reach pages built
    // from something else.
    for (const tag of event.data?.cacheTags ?? []) {
      revalidateTag(tag, profile);
    }
    for (const path of event.data?.paths ?? []) {
      revalidatePath(path);
    }
    // 2xx: delivered. Anything else is retried for about three days, and
    // 410 Gone turns the webhook off.
    return new Response(null, { status: 204 });
  };
}

/**
 * verify returns the event a request delivers, or null when its signature
 * does not verify with secret or its timestamp is more than 5 minutes
 * away (a replay). It verifies the raw body, before any parsing: the
 * signature covers its bytes.
 */
async function verify(request: Request, secret: string): Promise<BlogEvent | null> {
  const body = await request.text();
  try {
    return new Webhook(secret).verify(body, {
      'webhook-id': request.headers.get('webhook-id') ?? '',
      'webhook-timestamp': request.headers.get('webhook-timestamp') ?? '',
      'webhook-signature': request.headers.get('webhook-signature') ?? '',
    }) as BlogEvent;
  } catch (err) {
    if (err instanceof WebhookVerificationError) {
      return null;
    }
    throw err;
  }
}

// A Next.js route handler (app/api/revalidate/route.ts) that revalidates
// exactly the pages a blog event names. Create a webhook pointing at it
//
//   mutation { createWebhook(input: {
//     url: "https://www.example.com/api/revalidate",
//     events: ["post.published", "post.published.edited", "post.unpublished", "post.deleted",
//              "author.updated", "category.updated", "comment.added", "comment.edited",
//              "comment.approved", "comment.deleted", "page.published", "page.published.edited",
//              "page.unpublished", "page.deleted", "site.updated"] }) { secret webhook { id } } }
//
// site.updated names no path: its cache tag, "site", is on every page that
// shows the site's settings (the layout's title and menus).
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
  data: {
    /** The frontend's pages of what changed, before and after the write. */
    paths?: string[];
    /** The tags of every cached response that showed what changed. */
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

/** Answers 401 unless the request is a delivery signed with the secret. */
export async function POST(request: Request): Promise<Response> {
  const secret = process.env.BLOG_WEBHOOK_SECRET;
  if (!secret) {
    return new Response('BLOG_WEBHOOK_SECRET is not set', { status: 500 });
  }
  // Verify the raw body, before any parsing: the signature covers its bytes.
  const body = await request.text();
  let event: BlogEvent;
  try {
    event = new Webhook(secret).verify(body, {
      'webhook-id': request.headers.get('webhook-id') ?? '',
      'webhook-timestamp': request.headers.get('webhook-timestamp') ?? '',
      'webhook-signature': request.headers.get('webhook-signature') ?? '',
    }) as BlogEvent;
  } catch (err) {
    if (err instanceof WebhookVerificationError) {
      return new Response('invalid signature', { status: 401 });
    }
    throw err;
  }
  // Deliveries come at least once (a retry has the same webhook-id):
  // revalidating twice is harmless, so no id needs remembering.
  for (const path of event.data.paths ?? []) {
    revalidatePath(path);
  }
  for (const tag of event.data.cacheTags ?? []) {
    revalidateTag(tag);
  }
  // 2xx: delivered. Anything else is retried for about three days, and
  // 410 Gone turns the webhook off.
  return new Response(null, { status: 204 });
}

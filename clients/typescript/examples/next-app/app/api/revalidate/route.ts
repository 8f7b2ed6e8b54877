import { revalidateHandler } from '../../../../../src/next';

// The blog's webhook: verified with BLOG_WEBHOOK_SECRET, then every cache
// tag and path of the event revalidated.
export const POST = revalidateHandler();

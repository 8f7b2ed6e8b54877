// Preview links in Next.js's draft mode. An editor's share button makes a
// preview token (createPreviewLink); the link to share is the frontend's
// /api/draft?token=<token>. Its route handler checks the token with the
// API, turns draft mode on and keeps the token in a cookie, and sends the
// reader to the post's own page, which then shows the draft:
//
//   // app/api/draft/route.ts
//   export const GET = draftModeHandler(process.env.BLOG_API!);
//
//   // app/posts/[slug]/page.tsx
//   const token = await previewToken();
//   const preview = token ? await previewPage(process.env.BLOG_API!, token) : null;
//
// In draft mode Next.js renders each request afresh and reads no
// 'use cache' entry, and the API never caches an answer that used a
// preview token, so the reader sees the draft as it is now.
import { cookies, draftMode } from 'next/headers';
import type { Endpoint } from '../client';
import { previewPage } from '../pages';

/** The cookie that holds a reader's preview token while draft mode is on. */
export const previewCookie = 'blog-preview';

/**
 * draftModeHandler returns the GET route handler of preview links
 * (`?token=<token>`): 404 when the API does not know the token (unknown,
 * expired, or its post deleted: the API does not say which); otherwise it
 * turns draft mode on, keeps the token in an HTTP-only cookie and
 * redirects (307) to the post's page, the href of its card. It never
 * redirects anywhere a request names.
 */
export function draftModeHandler(endpoint: Endpoint): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const token = url.searchParams.get('token');
    const view = token ? await previewPage(endpoint, token) : null;
    if (token === null || view === null) {
      return new Response('This preview link is unknown or has expired.', { status: 404 });
    }
    (await draftMode()).enable();
    (await cookies()).set(previewCookie, token, {
      httpOnly: true,
      secure: url.protocol === 'https:',
      sameSite: 'lax',
      path: '/',
    });
    return new Response(null, { status: 307, headers: { Location: view.card.href } });
  };
}

/**
 * exitDraftModeHandler returns a GET route handler (/api/draft/exit) that
 * turns draft mode off, forgets the token and redirects (307) to the home
 * page.
 */
export function exitDraftModeHandler(): () => Promise<Response> {
  return async () => {
    (await draftMode()).disable();
    (await cookies()).delete(previewCookie);
    return new Response(null, { status: 307, headers: { Location: '/' } });
  };
}

/**
 * previewToken returns the preview token of the request when draft mode is
 * on, else null. It reads cookies only in draft mode, so a page that calls
 * it is still prerendered for everyone else.
 */
export async function previewToken(): Promise<string | null> {
  if (!(await draftMode()).isEnabled) {
    return null;
  }
  return (await cookies()).get(previewCookie)?.value ?? null;
}

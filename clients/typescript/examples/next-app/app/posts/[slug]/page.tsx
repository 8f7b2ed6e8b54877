import { notFound, redirect } from 'next/navigation';
import { previewToken } from '../../../../../src/next';
import { previewPage } from '../../../../../src/pages';
import { api, home, post } from '../../../lib/blog';

/** The latest posts are built with the app; others on their first request. */
export async function generateStaticParams(): Promise<{ slug: string }[]> {
  const { latest } = await home();
  return latest.posts.map((card) => ({ slug: card.href.replace('/posts/', '') }));
}

export default async function PostPage({ params }: { params: Promise<{ slug: string }> }) {
  const { slug } = await params;
  // A preview link's reader (draft mode) sees the draft, never a cached page.
  const token = await previewToken();
  const preview = token ? await previewPage(api, token) : null;
  if (preview && preview.card.href === `/posts/${slug}`) {
    return (
      <article>
        <p>
          {preview.banner} · <a href="/api/draft/exit">Leave the preview</a>
        </p>
        <h1>{preview.card.title}</h1>
        <div dangerouslySetInnerHTML={{ __html: preview.html }} />
      </article>
    );
  }
  const routed = await post(slug);
  if (routed === null) {
    notFound();
  }
  if ('redirect' in routed) {
    redirect(routed.redirect);
  }
  const { card, html } = routed.page;
  return (
    <article>
      <h1>{card.title}</h1>
      <p>
        {card.byline.name} · {card.date} · {card.readingTime}
      </p>
      {/* Sanitized by the API. */}
      <div dangerouslySetInnerHTML={{ __html: html }} />
    </article>
  );
}

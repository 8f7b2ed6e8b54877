// Checks the example Next.js app (clients/typescript/examples/next-app),
// built with `next build` against the demo blog and served by
// `next start`, as its readers and the blog's webhook see it:
//
//   - the home page and a post page, prerendered at build, show the demo
//     posts;
//   - after a title edit the post page still shows the cached title, and a
//     webhook delivery naming the post's cache tags (signed with the npm
//     standardwebhooks package) makes the next request show the new one;
//     an unsigned delivery is 401;
//   - a preview link (createPreviewLink's token at /api/draft) turns draft
//     mode on and redirects to the post's page, which then shows the
//     preview's banner; an unknown token is 404.
//
//   DEV_TOKEN=<admin token> BLOG_WEBHOOK_SECRET=whsec_... \
//     node e2e/nextjs.mjs http://127.0.0.1:8080/graphql http://127.0.0.1:3000
import { Webhook } from "../clients/typescript/node_modules/standardwebhooks/dist/index.js";

const [endpoint, site] = process.argv.slice(2);
const { DEV_TOKEN: token, BLOG_WEBHOOK_SECRET: secret } = process.env;
if (!endpoint || !site || !token || !secret) {
  console.error("usage: DEV_TOKEN=... BLOG_WEBHOOK_SECRET=... node e2e/nextjs.mjs ENDPOINT SITE");
  process.exit(2);
}

let failed = 0;
let passed = 0;
function check(ok, what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    console.error(`FAIL: ${what}`);
  }
}

/** graphql sends one operation to the API as the admin and returns its data. */
async function graphql(query, variables = {}) {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const { data, errors } = await response.json();
  if (errors) {
    throw new Error(`${query}: ${JSON.stringify(errors)}`);
  }
  return data;
}

/** page GETs a path of the site and returns its status, Location and text. */
async function page(path, headers = {}) {
  const response = await fetch(new URL(path, site), { headers, redirect: "manual" });
  return { status: response.status, location: response.headers.get("location"), text: await response.text(), response };
}

const home = await page("/");
check(home.status === 200, `GET / is 200, not ${home.status}`);
const slug = /href="\/posts\/([a-z0-9-]+)"/.exec(home.text)?.[1];
check(slug !== undefined, "the home page links a post");
if (slug === undefined) {
  process.exit(1);
}
const { post } = await graphql("query($slug: String!) { post(slug: $slug) { id version title } }", { slug });
const before = await page(`/posts/${slug}`);
check(before.status === 200 && before.text.includes(escape(post.title)), `GET /posts/${slug} shows "${post.title}"`);

// The tags the write's event names for the post: the ones its answer carries.
const tagged = await fetch(`${endpoint}?${new URLSearchParams({ query: `{ post(slug: "${slug}") { title } }` })}`);
const cacheTags = (tagged.headers.get("surrogate-key") ?? "").split(" ").filter(Boolean);
check(cacheTags.some((t) => t.startsWith("post:")), `the post's answer names a post: tag, not ${cacheTags}`);

const title = `${post.title} (edited)`;
await graphql("mutation($input: UpdatePostInput!) { updatePost(input: $input) { post { title } } }", {
  input: { id: post.id, expectedVersion: post.version, title },
});
const cached = await page(`/posts/${slug}`);
check(cached.text.includes(escape(post.title)) && !cached.text.includes(escape(title)), "before the delivery the page is the cached one");

const body = JSON.stringify({ type: "post.published.edited", timestamp: new Date().toISOString(), data: { cacheTags } });
const unsigned = await fetch(new URL("/api/revalidate", site), { method: "POST", body });
check(unsigned.status === 401, `an unsigned delivery is 401, not ${unsigned.status}`);
const id = `msg_${Date.now()}`;
const now = new Date();
const signature = new Webhook(secret).sign(id, now, body);
const delivered = await fetch(new URL("/api/revalidate", site), {
  method: "POST",
  headers: { "webhook-id": id, "webhook-timestamp": String(Math.floor(now / 1000)), "webhook-signature": signature },
  body,
});
check(delivered.status === 204, `a signed delivery is 204, not ${delivered.status}`);
const after = await page(`/posts/${slug}`);
check(after.text.includes(escape(title)), `after the delivery the page shows "${title}"`);

const unknown = await page("/api/draft?token=nope");
check(unknown.status === 404, `an unknown preview token is 404, not ${unknown.status}`);
const { createPreviewLink } = await graphql(
  "mutation($input: CreatePreviewLinkInput!) { createPreviewLink(input: $input) { token } }",
  { input: { postId: post.id, expiresIn: 3600 } },
);
const link = await page(`/api/draft?token=${encodeURIComponent(createPreviewLink.token)}`);
check(link.status === 307 && link.location === `/posts/${slug}`, `a preview link redirects to /posts/${slug}: ${link.status} ${link.location}`);
const cookie = link.response.headers
  .getSetCookie()
  .map((c) => c.split(";")[0])
  .join("; ");
const preview = await page(`/posts/${slug}`, { Cookie: cookie });
check(preview.status === 200 && preview.text.includes("Preview: "), "in draft mode the post page shows the preview's banner");

console.log(`nextjs: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

/** escape returns text as React writes it into HTML. */
function escape(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

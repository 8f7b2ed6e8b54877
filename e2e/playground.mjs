// Opens the server's GraphiQL playground in headless Chromium with every
// request to another origin blocked, runs the default query and checks that
// the result pane shows the demo blog's latest posts, as the API returns
// them. It fails when the page asked for anything outside the server (a
// CDN, say), when its Content-Security-Policy refused anything the page
// needs, or when the prefilled token ends up in localStorage or the
// address, and saves a screenshot. With DEV_TOKEN it also runs a
// subscription and checks that a comment added meanwhile shows up.
//
// Usage: node playground.mjs BASE_URL SCREENSHOT.png
//   BASE_URL   the server, e.g. http://127.0.0.1:8080
//   CHROMIUM   (environment) the browser, default /usr/bin/chromium
//   DEV_TOKEN  (environment) when set, the Authorization header the
//              playground must prefill: Bearer DEV_TOKEN
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium } from 'playwright-core';

const [base, screenshot] = process.argv.slice(2);
if (!base || !screenshot) {
  console.error('usage: node playground.mjs BASE_URL SCREENSHOT.png');
  process.exit(2);
}
const origin = new URL(base).origin;
const timeout = 30_000;

const userDataDir = await mkdtemp(join(tmpdir(), 'blog-playground-'));
const browser = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
  viewport: { width: 1600, height: 1000 },
});

const failures = [];
const blocked = [];
let page;
try {
  await browser.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) {
      return route.continue();
    }
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (err) => failures.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) {
      failures.push(`refused by the page's policy: ${msg.text()}`);
    }
  });

  await page.goto(`${origin}/`);
  const query = new URL(page.url()).searchParams.get('query');
  if (!query) {
    throw new Error(`the playground at ${page.url()} opened without a default query`);
  }

  // What the result pane must show: the same query sent to the API.
  const api = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  }).then((r) => r.json());
  const titles = api.data?.posts?.edges?.map((e) => e.node.title) ?? [];
  if (titles.length === 0) {
    throw new Error(`the default query shows no posts: ${JSON.stringify(api)}`);
  }

  if (process.env.DEV_TOKEN) {
    await page.getByRole('button', { name: 'Headers' }).click();
    await page.locator('.graphiql-editor-tool').getByText(`"Bearer ${process.env.DEV_TOKEN}"`).first().waitFor();
  }

  await page.getByRole('button', { name: /execute query/i }).click();
  const result = page.locator('.graphiql-response');
  for (const title of titles.slice(0, 3)) {
    await result.getByText(JSON.stringify(title), { exact: false }).first().waitFor();
  }

  if (process.env.DEV_TOKEN) {
    const stored = await page.evaluate(() => JSON.stringify(Object.entries(window.localStorage)));
    if (stored.includes(process.env.DEV_TOKEN)) {
      failures.push('the playground keeps the token in localStorage');
    }
    if (page.url().includes(process.env.DEV_TOKEN)) {
      failures.push('the playground puts the token in the address');
    }
  }

  // The explorer plugin renders the schema as a tree of fields.
  await page.getByRole('button', { name: 'Show GraphiQL Explorer' }).click();
  await page.locator('.graphiql-explorer-root').getByText('categories', { exact: true }).first().waitFor();
  console.log(`playground: result pane shows ${titles.slice(0, 3).map((t) => JSON.stringify(t)).join(', ')}`);

  if (process.env.DEV_TOKEN) {
    // A subscription runs too: a comment added through the API shows up
    // in the result pane while it is open.
    const graphql = (q, variables) =>
      fetch(`${origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.DEV_TOKEN}` },
        body: JSON.stringify({ query: q, variables }),
      }).then((r) => r.json());
    const { data } = await graphql('{ liveCursor posts(first: 1) { edges { node { id } } } }');
    const post = data.posts.edges[0].node.id;
    const subscription = `subscription { commentAdded(postId: "${post}", after: "${data.liveCursor}") { comment { body } } }`;
    await page.goto(`${origin}/?query=${encodeURIComponent(subscription)}`);
    await page.getByRole('button', { name: /execute query/i }).click();
    const body = `Live from the playground ${Date.now()}`;
    const added = await graphql('mutation($in: AddCommentInput!) { addComment(input: $in) { comment { id } } }', {
      in: { postId: post, body },
    });
    if (added.errors) {
      throw new Error(`addComment: ${JSON.stringify(added.errors)}`);
    }
    await page.locator('.graphiql-response').getByText(body, { exact: false }).first().waitFor();
    console.log('playground: a subscription shows a comment added while it runs');
  }
} catch (err) {
  failures.push(err.message);
} finally {
  // Taken on failure too: it shows how far the page got.
  await mkdir(dirname(screenshot), { recursive: true });
  await page?.screenshot({ path: screenshot });
  console.log(`playground: screenshot in ${screenshot}`);
  await browser.close();
  await rm(userDataDir, { recursive: true, force: true });
}
if (blocked.length > 0) {
  failures.push(`requests outside the server: ${blocked.join(', ')}`);
}
for (const f of failures) {
  console.error(`playground: ${f}`);
}
console.log(`playground: ${failures.length === 0 ? 1 : 0} passed, ${failures.length === 0 ? 0 : 1} failed`);
process.exitCode = failures.length === 0 ? 0 : 1;

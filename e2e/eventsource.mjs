// A browser's own EventSource, in headless Chromium, subscribes to a
// post's comments with a GET (the subscription in the URL, as graphql-sse's
// distinct connections mode takes it), receives a comment added
// meanwhile, and resumes after the server's end of the stream the way
// browsers do: it reconnects by itself and sends the last event's id as
// Last-Event-ID. A comment added while it was away arrives, then a live
// one: each once, in order.
//
// The page is served by a small proxy in front of the server, on
// loopback, so that the test decides when a stream ends: it ends the
// first stream after its first event, as a load balancer's timeout or a
// server's restart would, and holds the reconnection until the missed
// comment is written.
//
//   node e2e/eventsource.mjs http://127.0.0.1:PORT/graphql
//
// DEV_TOKEN is an author's or admin's token (the embedded mode logs one):
// authors' comments are published at once.
//   CHROMIUM   (environment) the browser, default /usr/bin/chromium
import { createServer, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const endpoint = process.argv[2];
const token = process.env.DEV_TOKEN;
if (!endpoint || !token) {
  console.error('usage: DEV_TOKEN=... node e2e/eventsource.mjs <endpoint>');
  process.exit(2);
}
const upstream = new URL(endpoint);
const timeout = 30_000;
const deadline = setTimeout(() => {
  console.error('eventsource: not done within 60 s');
  process.exit(1);
}, 60_000);

async function graphql(query, variables) {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

// The proxy: streams are counted; the first ends after its first event,
// the second waits for release() before it reaches the server.
const streams = [];
let release;
const released = new Promise((resolve) => (release = resolve));
const proxy = createServer(async (req, res) => {
  if (req.url === '/') {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>EventSource</title>');
    return;
  }
  const isStream = (req.headers.accept ?? '').includes('text/event-stream');
  const n = isStream ? streams.push({ lastEventId: req.headers['last-event-id'] ?? '' }) : 0;
  if (n >= 2) await released;
  const headers = { ...req.headers, host: upstream.host };
  const up = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (ur) => {
    res.writeHead(ur.statusCode, ur.headers);
    let seen = '';
    ur.on('data', (chunk) => {
      res.write(chunk);
      seen += chunk;
      // The first stream ends once one whole event went through.
      if (n === 1 && /event: next\n[^]*?\n\n/.test(seen)) {
        up.destroy();
        res.end();
      }
    });
    ur.on('end', () => res.end());
  });
  up.on('error', () => res.destroy());
  // The browser left or the proxy ended the stream: so does the server's.
  res.on('close', () => up.destroy());
  req.pipe(up);
});
await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${proxy.address().port}`;

const userDataDir = await mkdtemp(join(tmpdir(), 'blog-eventsource-'));
const browser = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
let failed = false;
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(timeout);
  await page.goto(`${origin}/`);

  const { liveCursor, posts } = await graphql('{ liveCursor posts(first: 1) { edges { node { id } } } }');
  const post = posts.edges[0].node.id;
  const query = `subscription($post: ID!, $after: String) {
  commentAdded(postId: $post, after: $after) { cursor comment { body } }
}`;
  const url = `/graphql?${new URLSearchParams({ query, variables: JSON.stringify({ post, after: liveCursor }) })}`;
  await page.evaluate((url) => {
    window.received = [];
    const source = new EventSource(url);
    source.addEventListener('next', (e) => {
      const { data, errors } = JSON.parse(e.data);
      window.received.push({ id: e.lastEventId, errors, body: data?.commentAdded.comment.body, cursor: data?.commentAdded.cursor });
    });
  }, url);
  const waitReceived = (n) => page.waitForFunction((n) => window.received.length >= n, n);

  const stamp = Date.now();
  const add = (body) => graphql('mutation($in: AddCommentInput!) { addComment(input: $in) { comment { id } } }', { in: { postId: post, body } });
  const want = [`before ${stamp}`, `missed ${stamp}`, `live ${stamp}`];
  await add(want[0]);
  await waitReceived(1);
  // The stream ended; the browser reconnects by itself. The comment it
  // misses is written before its reconnection reaches the server.
  await add(want[1]);
  release();
  await waitReceived(2);
  await add(want[2]);
  await waitReceived(3);

  const received = await page.evaluate(() => window.received);
  const bodies = received.map((r) => r.body);
  if (received.some((r) => r.errors)) throw new Error(`errors: ${JSON.stringify(received)}`);
  if (JSON.stringify(bodies) !== JSON.stringify(want)) {
    throw new Error(`received ${JSON.stringify(bodies)}, want ${JSON.stringify(want)}`);
  }
  if (received.some((r) => r.id !== r.cursor)) throw new Error(`event ids are not the cursors: ${JSON.stringify(received)}`);
  if (streams.length !== 2 || streams[1].lastEventId !== received[0].id) {
    throw new Error(`streams ${JSON.stringify(streams)}: want a reconnection with Last-Event-ID ${received[0].id}`);
  }
  console.log('eventsource: the browser reconnected with Last-Event-ID and missed no comment');
} catch (err) {
  failed = true;
  console.error(`eventsource: ${err.message}`);
} finally {
  await browser.close();
  await rm(userDataDir, { recursive: true, force: true });
  proxy.closeAllConnections();
  proxy.close();
  clearTimeout(deadline);
}
console.log(`eventsource: ${failed ? 0 : 1} passed, ${failed ? 1 : 0} failed`);
// Exits at once: a stream the browser left open must not keep it running.
process.exit(failed ? 1 : 0);

// Subscriptions checked with the independent clients a frontend uses:
// graphql-ws (GraphQL over WebSocket, graphql-transport-ws) and
// graphql-sse (GraphQL over Server-Sent Events, distinct connections
// mode). On both: subscribe to a post's comments, receive the comments
// added through mutations; disconnect, let comments be added, reconnect
// with the last cursor and receive exactly the missed ones, in order,
// then the live ones. Then the edits and deletions of comments
// (commentUpdated), on both, from a cursor taken before them.
//
//   node e2e/live.mjs http://127.0.0.1:PORT/graphql
//
// DEV_TOKEN is an author's or admin's token (the embedded mode logs one):
// authors' comments are published at once.
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';
import WebSocket from 'ws';

const endpoint = process.argv[2];
const token = process.env.DEV_TOKEN;
if (!endpoint || !token) {
  console.error('usage: DEV_TOKEN=... node e2e/live.mjs <endpoint>');
  process.exit(2);
}
const auth = { Authorization: `Bearer ${token}` };
const deadline = setTimeout(() => {
  console.error('live: not done within 60 s');
  process.exit(1);
}, 60_000);

async function graphql(query, variables) {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const subscription = `subscription($post: ID!, $after: String) {
  commentAdded(postId: $post, after: $after) { cursor comment { body } }
}`;

const { posts } = await graphql('{ posts(first: 1) { edges { node { id } } } }');
const post = posts.edges[0].node.id;
const run = `${process.pid}`;

async function addComments(names) {
  for (const n of names) {
    await graphql('mutation($in: AddCommentInput!) { addComment(input: $in) { comment { id } } }', {
      in: { postId: post, body: `${run} ${n}` },
    });
  }
}

// take returns the bodies of the next n events of a subscription the
// client starts after the cursor after that start with prefix, and the
// last cursor; then it leaves.
async function take(client, prefix, after, n, onStarted) {
  const events = client.iterate({ query: subscription, variables: { post, after } });
  const got = [];
  let cursor = after;
  const started = onStarted();
  for await (const result of events) {
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    const e = result.data.commentAdded;
    if (!e.comment.body.startsWith(`${run} ${prefix}`)) continue; // another client's
    got.push(e.comment.body.slice(run.length + 1));
    cursor = e.cursor;
    if (got.length === n) break; // return() completes the subscription
  }
  await started;
  return { got, cursor };
}

function expect(what, got, want) {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    console.error(`live: ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    process.exit(1);
  }
  console.log(`live: ${what}: ${got.length} events in order`);
}

const clients = {
  'graphql-ws': () =>
    createWSClient({ url: endpoint.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: auth, retryAttempts: 0 }),
  'graphql-sse': () => createSSEClient({ url: endpoint, headers: auth, retryAttempts: 0 }),
};

for (const [name, make] of Object.entries(clients)) {
  // Live: the comments added once the subscription is open. Started
  // after liveCursor, it misses none added in between.
  let client = make();
  const { liveCursor } = await graphql('{ liveCursor }');
  const first = [`${name} a`, `${name} b`, `${name} c`];
  const live = await take(client, name, liveCursor, 3, () => addComments(first));
  expect(`${name}: live`, live.got, first);
  client.dispose();

  // Away: comments added while no client is connected.
  const missed = Array.from({ length: 20 }, (_, i) => `${name} missed ${i}`);
  await addComments(missed);

  // Back with the last cursor: the missed ones, in order, then live.
  client = make();
  const back = await take(client, name, live.cursor, missed.length + 1, () => addComments([`${name} after`]));
  expect(`${name}: resumed`, back.got, [...missed, `${name} after`]);
  client.dispose();
}
// commentUpdated: a comment edited and another deleted, after a cursor:
// both clients get the two changes, in order.
const changes = `subscription($post: ID!, $after: String) {
  commentUpdated(postId: $post, after: $after) { cursor kind commentId comment { body } }
}`;
const { liveCursor: before } = await graphql('{ liveCursor }');
const { addComment } = await graphql('mutation($in: AddCommentInput!) { addComment(input: $in) { comment { id } } }', {
  in: { postId: post, body: `${run} to change` },
});
const changed = addComment.comment.id;
await graphql('mutation($in: UpdateCommentInput!) { updateComment(input: $in) { comment { id } } }', {
  in: { id: changed, body: `${run} changed` },
});
// Another comment, deleted: an edit of a comment deleted since is not
// given (the comment is gone), its deletion is.
const other = await graphql('mutation($in: AddCommentInput!) { addComment(input: $in) { comment { id } } }', {
  in: { postId: post, body: `${run} to delete` },
});
const deleted = other.addComment.comment.id;
await graphql('mutation($in: DeleteCommentInput!) { deleteComment(input: $in) { deletedCommentId } }', { in: { id: deleted } });
for (const [name, make] of Object.entries(clients)) {
  const client = make();
  const got = [];
  for await (const result of client.iterate({ query: changes, variables: { post, after: before } })) {
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    const e = result.data.commentUpdated;
    if (e.commentId !== changed && e.commentId !== deleted) continue; // another run's
    got.push(e.comment ? `${e.kind} ${e.comment.body.slice(run.length + 1)}` : e.kind);
    if (got.length === 2) break;
  }
  client.dispose();
  expect(`${name}: commentUpdated`, got, ['EDITED changed', 'DELETED']);
}
clearTimeout(deadline);
console.log('live: both clients received every comment once, in order');
process.exit(0);

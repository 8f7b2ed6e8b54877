import { request } from './client';
import type { CommentAddedSubscription as CommentAdded } from './gql/graphql';
import { CommentAddedSubscription, LiveCursorQuery } from './operations';
import { byline, date } from './pages';
import type { Byline } from './pages';

// The post page's live comment thread. The page reads liveCursor before
// its data (liveCursor below); the thread then subscribes after that
// cursor over GraphQL over Server-Sent Events with the browser's own
// EventSource (a GET with the subscription in its URL), so a comment
// written between the page's read and the subscription still arrives.
// When the connection drops, EventSource reconnects by itself and sends
// the last event's id, which is its cursor, as Last-Event-ID: the server
// replays what the thread missed, in order. A comment the page already
// shows may arrive again (written after the cursor, before the page's
// read): the thread drops it by id.

/** A comment as the live thread appends it. */
export interface LiveComment {
  id: string;
  /** The comment it replies to, null for a comment on the post. */
  parentId: string | null;
  by: Byline | null;
  body: string;
  at: string;
}

/** What a live thread tells the page. */
export interface LiveThreadHandlers {
  /** A comment or reply to append, once each, in the order they were published. */
  onComment(comment: LiveComment): void;
  /**
   * The subscription ended with an error code: CURSOR_EXPIRED when the
   * thread was away longer than the log keeps events (reload the page),
   * NOT_FOUND when the post is gone.
   */
  onError?(code: string, message: string): void;
}

/** A running live thread: close stops it. */
export interface LiveThread {
  /** The cursor of the last event received: where a new thread would resume. */
  readonly cursor: string;
  close(): void;
}

/** liveCursor returns where the event log stands, to read before the page's data. */
export async function liveCursor(endpoint: string): Promise<string> {
  return (await request(endpoint, LiveCursorQuery, {})).liveCursor;
}

interface Answer {
  data?: CommentAdded | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/**
 * liveThread subscribes to the comments of post published after cursor
 * (from liveCursor, or a previous thread's cursor) and hands each to
 * handlers.onComment, skipping the ids in shown (the comments the page
 * already shows). It resumes by itself after a dropped connection.
 */
export function liveThread(
  endpoint: string,
  postId: string,
  cursor: string,
  handlers: LiveThreadHandlers,
  shown: Iterable<string> = [],
): LiveThread {
  const seen = new Set(shown);
  const variables: { postId: string; after: string | null } = { postId, after: cursor };
  const url = new URL(endpoint, globalThis.location?.href);
  url.searchParams.set('query', CommentAddedSubscription.toString());
  url.searchParams.set('variables', JSON.stringify(variables));
  const source = new EventSource(url);
  const thread = {
    cursor,
    close: () => source.close(),
  };
  source.addEventListener('next', (event: MessageEvent<string>) => {
    const answer = JSON.parse(event.data) as Answer;
    const first = answer.errors?.[0];
    if (first) {
      // The server ends the stream after an error: no reconnection.
      source.close();
      handlers.onError?.(first.extensions?.code ?? 'INTERNAL', first.message);
      return;
    }
    const added = answer.data?.commentAdded;
    if (!added) {
      return;
    }
    thread.cursor = added.cursor;
    const { comment } = added;
    if (seen.has(comment.id) || comment.deleted) {
      return;
    }
    seen.add(comment.id);
    handlers.onComment({
      id: comment.id,
      parentId: comment.parent?.id ?? null,
      by: byline(comment.commenter),
      body: comment.body,
      at: date(comment.createdAt),
    });
  });
  // graphql-sse's complete: the subscription ended for good (its post was
  // deleted, say); EventSource would otherwise reconnect.
  source.addEventListener('complete', () => source.close());
  return thread;
}

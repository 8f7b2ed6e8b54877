import type { TypedDocumentString } from './gql/graphql';

/** GraphQLRequestError is the first error the API answered, with its `extensions.code`. */
export class GraphQLRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'GraphQLRequestError';
  }
}

interface Response<TResult> {
  data?: TResult | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/**
 * Endpoint says where request sends operations: the URL of the API's
 * /graphql, or that URL with the function that sends each HTTP request
 * (the global fetch when not given). A framework's fetch goes there:
 * Next.js's fetch options and cache tags (src/next), a
 * timeout, a test's double. It sees every answer whole, headers included.
 */
export type Endpoint = string | { url: string; fetch?: Fetch };

/** Fetch sends one HTTP request, as the global fetch does. */
export type Fetch = (url: string, init: RequestInit) => Promise<globalThis.Response>;

/** The first definition of a document: its operation (fragments follow it). */
const operationKind = /^\s*(query|mutation|subscription)\b/;

/** The SHA-256 of each document's text, in hex, computed once. */
const hashes = new Map<string, Promise<string>>();

/** sha256 returns the SHA-256 hash of text in lowercase hex, as automatic persisted queries name a query. */
function sha256(text: string): Promise<string> {
  let hash = hashes.get(text);
  if (!hash) {
    hash = crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)).then((sum) =>
      Array.from(new Uint8Array(sum), (b) => b.toString(16).padStart(2, '0')).join(''),
    );
    hashes.set(text, hash);
  }
  return hash;
}

/**
 * request sends one operation to the endpoint and returns its data, as
 * the signed-in user of token when one is given. It throws a
 * GraphQLRequestError when the API answers with an error.
 *
 * A query goes as a GET with an automatic persisted query: its hash
 * alone first, a short URL that is the same for every reader, so a CDN or
 * the browser can keep the answer (the server marks an anonymous query's
 * answer public); when the server does not know the hash
 * (PERSISTED_QUERY_NOT_FOUND), once more with the query, which registers
 * it for every server of the API. A mutation goes as a POST.
 */
export async function request<TResult, TVariables>(
  endpoint: Endpoint,
  document: TypedDocumentString<TResult, TVariables>,
  variables: TVariables,
  token?: string,
): Promise<TResult> {
  const headers: Record<string, string> = {
    Accept: 'application/graphql-response+json, application/json',
  };
  if (token) {
    headers.Authorization = `Bearer ${token}`;
  }
  const { url, fetch: send } = typeof endpoint === 'string' ? { url: endpoint, fetch: undefined } : endpoint;
  const query = document.toString();
  let answer: Answer<TResult>;
  if (operationKind.exec(query)?.[1] === 'query') {
    const extensions = JSON.stringify({ persistedQuery: { version: 1, sha256Hash: await sha256(query) } });
    const params = new URLSearchParams({ variables: JSON.stringify(variables), extensions });
    answer = await exchange<TResult>(send, `${url}?${params}`, { method: 'GET', headers });
    if (answer.result.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND') {
      params.set('query', query);
      answer = await exchange<TResult>(send, `${url}?${params}`, { method: 'GET', headers });
    }
  } else {
    answer = await exchange<TResult>(send, url, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
  }
  const { status, result } = answer;
  const first = result.errors?.[0];
  if (first) {
    throw new GraphQLRequestError(first.extensions?.code ?? 'INTERNAL', first.message);
  }
  if (result.data == null) {
    throw new GraphQLRequestError('INTERNAL', `HTTP ${status} without data`);
  }
  return result.data;
}

interface Answer<TResult> {
  status: number;
  result: Response<TResult>;
}

/** exchange makes one HTTP request with send (or fetch) and reads its GraphQL answer. */
async function exchange<TResult>(send: Fetch | undefined, url: string, init: RequestInit): Promise<Answer<TResult>> {
  const response = await (send ?? fetch)(url, init);
  return { status: response.status, result: (await response.json()) as Response<TResult> };
}

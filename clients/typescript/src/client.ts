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
 * request sends one operation to the endpoint and returns its data, as
 * the signed-in user of token when one is given. It throws a
 * GraphQLRequestError when the API answers with an error.
 */
export async function request<TResult, TVariables>(
  endpoint: string,
  document: TypedDocumentString<TResult, TVariables>,
  variables: TVariables,
  token?: string,
): Promise<TResult> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/graphql-response+json, application/json',
  };
  if (token) {
    headers.Authorization = `Bearer ${token}`;
  }
  const response = await fetch(endpoint, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const result = (await response.json()) as Response<TResult>;
  const first = result.errors?.[0];
  if (first) {
    throw new GraphQLRequestError(first.extensions?.code ?? 'INTERNAL', first.message);
  }
  if (result.data == null) {
    throw new GraphQLRequestError('INTERNAL', `HTTP ${response.status} without data`);
  }
  return result.data;
}

// Starts GraphiQL on the page the server renders (playground.go). The
// query, variables and operation name travel in the address, so a link or
// a reload opens the same query; headers never do, and never reach
// localStorage either: a token stays in this tab's memory.
(() => {
  // GraphiQL keeps its tabs and its history of queries in localStorage,
  // each with the headers it was sent with; this storage keeps them
  // without.
  const withoutHeaders = (value) => {
    try {
      return JSON.stringify(JSON.parse(value, (key, v) => (key === 'headers' ? undefined : v)));
    } catch {
      return value;
    }
  };
  const ours = (key) => key.startsWith('graphiql:');
  const storage = {
    getItem: (key) => window.localStorage.getItem(key),
    setItem: (key, value) => {
      if (!key.endsWith(':headers')) {
        window.localStorage.setItem(key, withoutHeaders(value));
      }
    },
    removeItem: (key) => window.localStorage.removeItem(key),
    clear: () => Object.keys(window.localStorage).filter(ours).forEach((key) => window.localStorage.removeItem(key)),
    get length() {
      return Object.keys(window.localStorage).filter(ours).length;
    },
  };
  const root = document.getElementById('graphiql');
  const params = new URLSearchParams(window.location.search);
  const state = {
    query: params.get('query') ?? undefined,
    variables: params.get('variables') ?? undefined,
    operationName: params.get('operationName') ?? undefined,
  };
  const remember = (key) => (value) => {
    state[key] = value;
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(state)) {
      if (v) {
        search.set(k, v);
      }
    }
    window.history.replaceState(null, '', '?' + search.toString());
  };
  const plugins = [];
  if (window.GraphiQLPluginExplorer) {
    plugins.push(window.GraphiQLPluginExplorer.explorerPlugin());
  }
  const url = new URL(root.dataset.endpoint, window.location.href).href;
  const overHTTP = GraphiQL.createFetcher({ url });
  // operationKind returns what the operation GraphiQL runs is: query,
  // mutation or subscription (comments and strings left out).
  const operationKind = ({ query, operationName }) => {
    const src = (query || '').replace(/#[^\n]*/g, '').replace(/"""[\s\S]*?"""|"(?:\\.|[^"\\])*"/g, '""');
    const ops = [...src.matchAll(/(?:^|[}\s])(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/g)];
    const op = operationName ? ops.find((m) => m[2] === operationName) : ops[0];
    return op ? op[1] : 'query';
  };
  // overSSE runs a subscription over Server-Sent Events (graphql-sse's
  // distinct connections mode): each event is an answer GraphiQL shows as
  // it comes, until the stream completes or its stop button ends it.
  async function* overSSE(params, headers) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(params),
    });
    if (!res.ok || !res.body) {
      yield await res.json();
      return;
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          return;
        }
        buffered += value;
        let end;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) {
              event = line.slice(6).trim();
            } else if (line.startsWith('data:')) {
              data += line.slice(5).trimStart();
            }
          }
          if (event === 'complete') {
            return;
          }
          if (event === 'next') {
            yield JSON.parse(data);
          }
        }
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }
  const fetcher = (params, opts) =>
    operationKind(params) === 'subscription' ? overSSE(params, opts?.headers) : overHTTP(params, opts);
  ReactDOM.render(
    React.createElement(GraphiQL, {
      fetcher,
      plugins,
      query: state.query,
      variables: state.variables,
      operationName: state.operationName,
      headers: root.dataset.headers || undefined,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
      storage,
      onEditQuery: remember('query'),
      onEditVariables: remember('variables'),
      onEditOperationName: remember('operationName'),
      inputValueDeprecation: true,
    }),
    root,
  );
})();

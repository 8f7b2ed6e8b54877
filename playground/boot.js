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
  const fetcher = GraphiQL.createFetcher({ url: new URL(root.dataset.endpoint, window.location.href).href });
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

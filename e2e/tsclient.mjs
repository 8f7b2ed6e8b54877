// Runs the TypeScript client's request function
// (clients/typescript/src/client.ts, transpiled with the client's own
// TypeScript) against the running server and checks what it sends: a
// query as a GET of its hash alone, then, the first time, a GET of the
// query with its hash, whose answer is public (a CDN and the browser may
// keep it); from then on the hash alone, answered public; a mutation as a
// POST, answered no-store.
//
//   node e2e/tsclient.mjs http://127.0.0.1:8080/graphql
import { readFile, writeFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "../clients/typescript/node_modules/typescript/lib/typescript.js";

const endpoint = process.argv[2];
if (!endpoint) {
  console.error("usage: node tsclient.mjs ENDPOINT");
  process.exit(2);
}

const src = await readFile(new URL("../clients/typescript/src/client.ts", import.meta.url), "utf8");
const { outputText } = ts.transpileModule(src, {
  compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, verbatimModuleSyntax: true },
});
const dir = await mkdtemp(join(tmpdir(), "tsclient-"));
const file = join(dir, "client.mjs");
await writeFile(file, outputText);
const { request } = await import(file);
await rm(dir, { recursive: true });

// What the client sends, as the server answers it.
let sent = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  const res = await realFetch(url, init);
  const u = new URL(String(url));
  sent.push({ method: init?.method ?? "GET", query: u.searchParams.has("query"), hash: u.searchParams.has("extensions"), status: res.status, cacheControl: res.headers.get("cache-control") });
  return res;
};

let failures = 0;
const check = (what, ok, got) => {
  if (!ok) {
    failures++;
    console.error(`tsclient: ${what}: ${JSON.stringify(got)}`);
  }
};
// A document of its own, so the server does not know it yet.
const text = `query TsClientCheck { category(slug: "go") { name posts(first: 3) { edges { node { slug } } } } } # ${Date.now()}`;
const doc = { toString: () => text };

const first = await request(endpoint, doc, {});
check("the first read's data", first.category?.posts?.edges?.length > 0, first);
check("the first read: the hash alone, then the query with it, both GET", sent.length === 2 && sent.every((s) => s.method === "GET" && s.hash) && !sent[0].query && sent[1].query, sent);
check("the first read's answer is public", sent[1]?.cacheControl?.startsWith("public"), sent[1]);

sent = [];
const again = await request(endpoint, doc, {});
check("the next read's data", JSON.stringify(again) === JSON.stringify(first), again);
check("the next read: the hash alone, GET", sent.length === 1 && sent[0].method === "GET" && sent[0].hash && !sent[0].query, sent);
check("the next read's answer is public", sent[0]?.cacheControl?.startsWith("public"), sent[0]);

sent = [];
const mutation = await request(endpoint, { toString: () => "mutation TsClientWrite { __typename }" }, {});
check("a mutation's data", mutation.__typename === "Mutation", mutation);
check("a mutation is a POST, no-store", sent.length === 1 && sent[0].method === "POST" && sent[0].cacheControl === "no-store", sent);

if (failures > 0) {
  process.exit(1);
}
console.log("tsclient: reads are cacheable GETs of persisted queries, writes are POSTs");

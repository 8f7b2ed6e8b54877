// Validates the running server's sitemap: the index is a sitemapindex in
// the sitemaps.org namespace whose every entry is a page of the site, and
// every page it names validates against the sitemaps.org XML schema
// (sitemap.xsd, as npm sitemap ships it) with xmllint, and lists at most
// 50,000 URLs.
//
//   node e2e/sitemap.mjs http://127.0.0.1:8080
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const base = process.argv[2];
if (!base) {
  console.error("usage: node sitemap.mjs BASE_URL");
  process.exit(2);
}
const require = createRequire(import.meta.url);
const xsd = join(dirname(require.resolve("sitemap/package.json")), "schema", "sitemap.xsd");
const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';

async function get(url) {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}: ${await res.text()}`);
  return res.text();
}

// The server links to its own address (no -site-url in development),
// which may be localhost where base is 127.0.0.1.
const local = (loc) => base + new URL(loc).pathname + new URL(loc).search;

const index = await get(base + "/sitemap.xml");
if (!index.includes("<sitemapindex " + ns + ">")) {
  console.error(`sitemap: the index is not a sitemapindex of the sitemaps.org namespace:\n${index.slice(0, 300)}`);
  process.exit(1);
}
const locs = [...index.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1].replaceAll("&amp;", "&"));
if (locs.length === 0) {
  console.error("sitemap: the index names no page");
  process.exit(1);
}
let urls = 0;
for (const loc of locs) {
  if (!/\/sitemap\.xml\?section=/.test(loc)) {
    console.error(`sitemap: the index names ${loc}, not a page of the site's sitemap`);
    process.exit(1);
  }
  const page = await get(local(loc));
  try {
    execFileSync("xmllint", ["--noout", "--nonet", "--schema", xsd, "-"], { input: page, stdio: ["pipe", "ignore", "pipe"] });
  } catch (e) {
    console.error(`sitemap: ${loc} does not validate against sitemap.xsd:\n${e.stderr}`);
    process.exit(1);
  }
  const n = (page.match(/<url>/g) ?? []).length;
  if (n > 50000) {
    console.error(`sitemap: ${loc} lists ${n} URLs, more than 50,000`);
    process.exit(1);
  }
  urls += n;
}
console.log(`sitemap: the index and its ${locs.length} pages (${urls} URLs) validate against sitemap.xsd`);

// Parses the running server's feeds with independent parsers: every RSS
// and Atom feed with npm feedparser, once in strict mode (any XML or feed
// error fails) and once as feed readers use it (strict mode keeps element
// names' case, so it reads no RSS pubDate), and every JSON Feed against
// the JSON Feed 1.1 rules it must keep. Each feed must hold entries with a title, an absolute link, an id
// and a valid date.
//
//   node e2e/feeds.mjs http://127.0.0.1:8080
import { Readable } from "node:stream";
import FeedParser from "feedparser";

const base = process.argv[2];
if (!base) {
  console.error("usage: node feeds.mjs BASE_URL");
  process.exit(2);
}

const owners = ["/", "/categories/go/", "/authors/ada-lovelace/", "/tags/go/", "/series/dynamodb-single-table-design/"];
let failures = 0;
const fail = (what, msg) => {
  failures++;
  console.error(`feeds: ${what}: ${msg}`);
};

async function get(path) {
  const res = await fetch(base + path);
  if (res.status !== 200) {
    throw new Error(`${path}: HTTP ${res.status}: ${await res.text()}`);
  }
  return { type: res.headers.get("content-type"), body: await res.text() };
}

// parseXML returns the meta and items feedparser reads from body, or
// rejects with its first error.
function parseXML(url, body, strict) {
  return new Promise((resolve, reject) => {
    // resume_saxerror false: an XML error is an error, not a note.
    const fp = new FeedParser({ feedurl: url, strict, normalize: true, resume_saxerror: false });
    const items = [];
    fp.on("error", reject);
    fp.on("readable", function () {
      let it;
      while ((it = this.read())) items.push(it);
    });
    fp.on("end", () => {
      // What feedparser noted and read past (its "bozo" errors) fails too.
      if (fp.errors.length > 0) reject(fp.errors[0]);
      else resolve({ meta: fp.meta, items });
    });
    Readable.from([body]).pipe(fp);
  });
}

function checkItem(what, it) {
  if (!it.title) fail(what, "an item without a title");
  if (!it.link || !/^https?:\/\//.test(it.link)) fail(what, `item ${it.title}: link ${it.link} is not absolute`);
  if (!it.guid || !it.guid.startsWith("urn:uuid:")) fail(what, `item ${it.title}: id ${it.guid}`);
  if (!(it.pubdate instanceof Date) || isNaN(it.pubdate)) fail(what, `item ${it.title}: no valid date`);
}

for (const owner of owners) {
  for (const [file, type] of [["feed.xml", "rss"], ["atom.xml", "atom"]]) {
    const path = owner + file;
    try {
      const { body } = await get(path);
      await parseXML(base + path, body, true);
      const { meta, items } = await parseXML(base + path, body, false);
      if (meta["#type"] !== type) fail(path, `parsed as ${meta["#type"]}, want ${type}`);
      if (!meta.title || !meta.link) fail(path, "no title or link");
      if (items.length === 0) fail(path, "no items");
      for (const it of items) checkItem(path, it);
      console.log(`feeds: ${path}: ${meta["#type"]} ${meta["#version"]}, ${items.length} items, parsed by feedparser`);
    } catch (e) {
      fail(path, e.message);
    }
  }
  const path = owner + "feed.json";
  try {
    const { type, body } = await get(path);
    if (!type.startsWith("application/feed+json")) fail(path, `Content-Type ${type}`);
    const f = JSON.parse(body);
    if (f.version !== "https://jsonfeed.org/version/1.1") fail(path, `version ${f.version}`);
    if (typeof f.title !== "string" || !f.title) fail(path, "no title");
    if (!Array.isArray(f.items) || f.items.length === 0) fail(path, "no items");
    for (const it of f.items ?? []) {
      if (typeof it.id !== "string" || !it.id) fail(path, "an item without an id");
      if (typeof it.content_html !== "string" && typeof it.content_text !== "string")
        fail(path, `item ${it.id}: neither content_html nor content_text`);
      if (isNaN(Date.parse(it.date_published))) fail(path, `item ${it.id}: date_published ${it.date_published}`);
      checkItem(path, { title: it.title, link: it.url, guid: it.id, pubdate: new Date(it.date_published) });
    }
    console.log(`feeds: ${path}: JSON Feed 1.1, ${f.items.length} items`);
  } catch (e) {
    fail(path, e.message);
  }
}

if (failures > 0) {
  console.error(`feeds: ${failures} failures`);
  process.exit(1);
}

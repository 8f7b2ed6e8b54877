// A webhook receiver that verifies every delivery with standardwebhooks,
// the Standard Webhooks specification's reference library, independently
// of the server's Go code. It listens on 127.0.0.1 (PORT, default: a free
// port), prints "listening <port>" once it does, and verifies each POST
// with the secrets in WEBHOOK_SECRETS (space-separated: a delivery passes
// when any verifies, as during a rotation a receiver may know either):
// 204 when it verifies, 400 when not. GET /results answers the counts
// {"verified": n, "failed": n, "failures": [...]}.
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

const secrets = (process.env.WEBHOOK_SECRETS ?? "").split(/\s+/).filter(Boolean);
if (secrets.length === 0) {
  console.error("set WEBHOOK_SECRETS");
  process.exit(2);
}
const hooks = secrets.map((s) => new Webhook(s));
const results = { verified: 0, failed: 0, failures: [] };

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/results") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(results));
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = {
      "webhook-id": req.headers["webhook-id"] ?? "",
      "webhook-timestamp": req.headers["webhook-timestamp"] ?? "",
      "webhook-signature": req.headers["webhook-signature"] ?? "",
    };
    const errors = [];
    for (const h of hooks) {
      try {
        const payload = h.verify(body, headers);
        if (typeof payload !== "object" || payload === null || !("type" in payload) || !("data" in payload)) {
          throw new Error("the payload has no type or data");
        }
        results.verified++;
        res.writeHead(204);
        res.end();
        return;
      } catch (err) {
        errors.push(String(err && err.message ? err.message : err));
      }
    }
    results.failed++;
    results.failures.push({ id: headers["webhook-id"], errors });
    res.writeHead(400, { "content-type": "text/plain" });
    res.end("signature not verified\n");
  });
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  console.log(`listening ${server.address().port}`);
});
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => server.close(() => process.exit(0)));
}

// Runs the GraphQL over HTTP audit suite of graphql-http against the
// running server and fails when any audit, MUST, SHOULD or MAY, does not
// pass.
//
// Usage: node audit.mjs http://127.0.0.1:8080/graphql
import { serverAudits } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs ENDPOINT_URL');
  process.exit(2);
}

let passed = 0;
let failed = 0;
for (const audit of serverAudits({ url })) {
  const result = await audit.fn();
  if (result.status === 'ok') {
    passed++;
    console.log(`ok     ${result.id} ${result.name}`);
  } else {
    failed++;
    console.log(`${result.status.padEnd(6)} ${result.id} ${result.name}: ${result.reason}`);
  }
}
console.log(`audit: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;

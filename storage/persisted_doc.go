package storage

// # Persisted queries
//
// The automatic persisted queries of the GraphQL endpoint (a client sends
// the SHA-256 hash of a query document instead of the document) are kept
// in the table, so every server of a fleet, and a server after a restart,
// knows a query one of them was sent (persisted.go):
//
//	item                      PK                  SK                  attributes
//	persisted query           PERSISTED#<sha256>  PERSISTED#<sha256>  (query: the document's text, expiresAt TTL)
//
// <sha256> is the document's hash in 64 lowercase hexadecimal digits; the
// store refuses a hash that is not its query's and looks nothing up for a
// string that is not a hash. The item never changes but for its expiry,
// so it is read eventually consistent: one GetItem, on a hash the server
// does not hold in memory. It is written with one conditional PutItem
// (attribute_not_exists(PK), or an expiresAt already past, which TTL has
// not deleted yet), so two servers registering one query at once write
// it once. expiresAt (Unix seconds, the table's TTL attribute) is
// PersistedQueryTTL (30 days) after the registration; a query in use has
// it moved on by one conditional UpdateItem at most once a day
// (PersistedQueryRefresh) by each server that serves it, so a query its
// frontend still sends stays and one no client sends goes. An item past
// its expiresAt is not served, whether or not TTL has deleted it yet.
//
// What is written is bounded by the caller, the GraphQL endpoint
// (gqlhttp): only a document that parsed, validated and passed every
// limit (its size, tokens, depth, aliases, root fields and complexity)
// is registered, and each server writes at most a few registrations a
// second (its -persisted-query-writes); past that the query runs and is
// kept in that server's memory only. An item holds at most the query
// size limit (32 KiB by default). The change feed ignores the item, and
// the invariant checker knows its type.

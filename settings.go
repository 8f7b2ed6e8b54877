package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/live"
	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
	"github.com/blogql/blog/syndication"
)

// The table of settings in docs/operations.md is made from settings (readmeTable); its
// test fails when the two disagree.
//go:generate go test -run ^TestDocsConfiguration$ . -args -update-docs

// setting is one setting of the server, declared once: its flag, its
// environment variable, the value it sets in a config (whose default is
// the value's at declaration), its help for -h and its meaning in the
// table in docs/operations.md. Adding a setting is adding one to settings.
type setting struct {
	name, env string
	value     flag.Value
	usage     string // for -h; a `word` in backquotes names the flag's argument
	doc       string // for docs/operations.md, in Markdown
}

// settings returns the server's settings, each bound to its field of c,
// which they set to its default. Their order is the docs table's.
func settings(c *config) []setting {
	return []setting{
		{"host", "HOST", val(&c.host, "localhost"),
			"interface to listen on; \"\" or 0.0.0.0 for all (in a container), localhost keeps a dev run private",
			"interface to listen on (`0.0.0.0` in a container)"},
		{"port", "PORT", val(&c.port, 8080),
			"port to listen on; 0 picks a free one",
			"port to listen on"},
		{"dynamodb-endpoint", "DYNAMODB_ENDPOINT", val(&c.endpoint, ""),
			"DynamoDB endpoint `URL`, e.g. http://127.0.0.1:8765 for DynamoDB Local;\nwith neither this nor -aws the server runs the embedded engine",
			"DynamoDB endpoint URL, e.g. DynamoDB Local; empty and no `-aws`: the embedded engine"},
		{"aws", "DYNAMODB_AWS", val(&c.aws, false),
			"use AWS DynamoDB in -region with credentials from the SDK's default chain\n(at -dynamodb-endpoint when set, e.g. a VPC endpoint)",
			"use AWS DynamoDB with the SDK's default credential chain"},
		{"data", "DATA_DIR", val(&c.dataDir, ".data"),
			"`directory` where the embedded engine keeps its data file (" + dataFile + ");\n" + memoryData + " keeps the data in memory, gone when the server stops",
			"directory of the embedded engine's data file (`" + dataFile + "`); `" + memoryData + "` keeps the data in memory"},
		{"table", "DYNAMODB_TABLE", val(&c.table, "blog"),
			"DynamoDB table name",
			"table name"},
		{"region", "AWS_REGION", val(&c.region, "us-east-1"),
			"AWS region",
			"AWS region"},
		{"create-table", "CREATE_TABLE", &c.createTable,
			"create the table and its index if missing: true, false or auto\n(auto: true for the embedded engine and -dynamodb-endpoint, false for -aws)",
			"create the table and GSI1 if missing (auto: yes except on AWS)"},
		{"seed-demo", "SEED_DEMO", &c.seedDemo,
			"seed the demo blog (idempotent, works on any backend): true, false or auto\n(auto: into an empty table of the embedded engine)",
			"seed the demo blog, idempotent, any backend (auto: the embedded engine, when the table is empty)"},
		{"playground", "PLAYGROUND", &c.playground,
			"serve the GraphiQL playground at /: true, false or auto\n(auto: where introspection is on, which the playground needs)",
			"serve GraphiQL at `/` (auto: where introspection is on, which it needs; so off outside the embedded engine)"},
		{"playground-assets", "PLAYGROUND_ASSETS", val(&c.playgroundDir, defaultPlaygroundDir),
			"`directory` of the playground's GraphiQL files, installed by scripts/playground-assets.sh;\n" +
				"left at its default, also looked for beside the data directory, the executable and the source;\n" +
				"without them the playground loads GraphiQL from a CDN",
			"directory of the playground's GraphiQL files; left at its default, also looked for elsewhere (see [Run it](../README.md#run-it)); none found: a CDN"},
		{"introspection", "INTROSPECTION", &c.introspection,
			"allow schema introspection and field suggestions in errors (the playground and code\ngenerators need them): true, false or auto (auto: true for the embedded engine only)",
			"allow schema introspection and field suggestions in errors (auto: embedded only)"},
		{"request-timeout", "REQUEST_TIMEOUT", val(&c.requestTimeout, gqlhttp.DefaultRequestTimeout),
			"how long one GraphQL request may take, its DynamoDB calls included;\nless than the server's write timeout of " + writeTimeout.String(),
			"how long a GraphQL request may take, its DynamoDB calls included (`TIMEOUT` past it)"},
		{"dynamodb-max-attempts", "DYNAMODB_MAX_ATTEMPTS", val(&c.maxAttempts, storage.DefaultMaxAttempts),
			fmt.Sprintf("attempts of a DynamoDB call that is throttled or fails for a passing reason, 1 to %d", storage.MaxAttemptsLimit),
			fmt.Sprintf("attempts of a DynamoDB call that is throttled or fails for a passing reason, 1 to %d", storage.MaxAttemptsLimit)},
		{"log-level", "LOG_LEVEL", levelValue{&c.logLevel},
			"log `level`: debug, info, warn or error",
			"`debug`, `info`, `warn`, `error`"},
		{"log-format", "LOG_FORMAT", val(&c.logFormat, "text"),
			"log `format`: text or json",
			"`text` or `json`"},
		{"cache-max-age", "CACHE_MAX_AGE", val(&c.cacheMaxAge, time.Minute),
			"how long a CDN or browser may reuse the answer to an anonymous GET query;\n0 marks every answer no-store",
			"how long a CDN or browser may reuse the answer to an anonymous GET query (see [HTTP caching](frontend.md#http-caching)); `0`: nothing may be stored"},
		{"cache-s-maxage", "CACHE_S_MAXAGE", val(&c.cacheSMaxAge, time.Duration(0)),
			"how long a CDN may reuse the answer to an anonymous GET query, a feed or the sitemap\n(s-maxage), which the change feed's events purge by its Surrogate-Key; 0: as long as -cache-max-age",
			"how long a CDN may reuse the answer to an anonymous GET query, a feed or the sitemap (`s-maxage`), which the change feed's events purge by tag (see [HTTP caching](frontend.md#http-caching)); `0`: left out, as long as `-cache-max-age`"},
		{"cache-stale-while-revalidate", "CACHE_STALE_WHILE_REVALIDATE", val(&c.cacheSWR, time.Duration(0)),
			"how long past its age a cache may serve a public answer while it fetches it again\n(stale-while-revalidate); 0: left out",
			"how long past its age a cache may serve a public answer while it fetches it again (`stale-while-revalidate`); `0`: left out"},
		{"answer-cache-bytes", "ANSWER_CACHE_BYTES", val(&c.answerCacheBytes, gqlhttp.DefaultAnswerCacheBytes),
			"memory, in bytes, of the answers to anonymous reads kept and served again until a write\nchanges what they show; 0: none kept",
			"memory of the answers to anonymous reads kept and served again until a write changes what they show (see [HTTP caching](frontend.md#http-caching)); `0`: none kept"},
		{"inflight-bytes", "INFLIGHT_BYTES", val(&c.inflightBytes, inflight.DefaultBudget),
			"bytes of post bodies and HTML that the requests in flight (GraphQL, feeds, sitemaps) may\nload and answer between them; past it requests queue, then get 503 SERVER_BUSY; 0: no bound",
			"bytes of post bodies and HTML that the requests in flight (GraphQL, feeds, sitemaps) may load and answer between them; past it a request waits up to 2 s, then gets `503` with `Retry-After` and `SERVER_BUSY` (see [Memory of requests in flight](#memory-of-requests-in-flight)); `0`: no bound"},
		{"execution-slots", "EXECUTION_SLOTS", val(&c.execSlots, 0),
			"the most GraphQL requests (not subscriptions) executed at once; the others wait, a turn\nfor each publication in turn; 0: 4 a CPU core (GOMAXPROCS) embedded, 16 on DynamoDB; negative: no bound",
			"the most GraphQL requests executed at once on the server (subscriptions and streams take none); the others wait for a slot in their publication's queue, and a slot given back goes to the publication with the fewest requests running, so a flood of one publication's requests keeps another's waiting for about one of them (see [Requests executed at once](platform-operations.md#requests-executed-at-once)); `0`: 4 for each CPU core the process uses (`GOMAXPROCS`) on the embedded engine, 16 on DynamoDB, where a request mostly waits for its answers; negative: no bound, every request runs at once"},
		{"execution-queue", "EXECUTION_QUEUE", val(&c.execQueue, defaultExecQueue),
			"the most GraphQL requests of one publication waiting for a slot of -execution-slots; past it\n503 SERVER_BUSY with Retry-After, before the request's body is read",
			"the most GraphQL requests of one publication waiting for a slot of `-execution-slots`; past it the publication's requests get `503` `SERVER_BUSY` with `Retry-After`, before their body is read (see [Requests executed at once](platform-operations.md#requests-executed-at-once))"},
		{"pprof-addr", "PPROF_ADDR", val(&c.pprofAddr, ""),
			"serve runtime profiles at /debug/pprof/ on this loopback `address`, e.g. 127.0.0.1:6060;\nempty: off",
			"serve runtime profiles at `/debug/pprof/` on this loopback address, e.g. `127.0.0.1:6060`; empty: off (see [Performance](#performance))"},
		{"metrics-addr", "METRICS_ADDR", val(&c.metricsAddr, ""),
			"serve Prometheus metrics at /metrics on this `address`, a listener of its own, e.g. :9090;\nempty: off",
			"serve Prometheus metrics at `/metrics` on this address, e.g. `:9090`; empty: off (see [Metrics and tracing](#metrics-and-tracing))"},
		{"jwt-secret", "JWT_SECRET", val(&c.jwtSecret, ""),
			"`secret` that signs HS256 bearer tokens, at least 32 bytes (prefer the variable: flags show in ps);\nthis or -jwt-jwks-url is needed outside the embedded mode, which otherwise uses a development secret",
			"secret of HS256 tokens, at least 32 bytes (prefer the variable: flags show in `ps`)"},
		{"cursor-key", "CURSOR_KEY", val(&c.cursorKey, ""),
			fmt.Sprintf("`key` that seals the cursors of lists, at least %d bytes (prefer the variable: flags show in ps);\nempty: a random key kept in the table, the same for every server on it", storage.MinCursorKeyBytes),
			fmt.Sprintf("key that seals the cursors of lists, at least %d bytes (prefer the variable); empty: a random key kept in the table, the same for every server on it", storage.MinCursorKeyBytes)},
		{"insecure-dev-tokens", "INSECURE_DEV_TOKENS", val(&c.insecureDevTokens, false),
			"in the embedded mode without -jwt-secret or -jwt-jwks-url, accept (and log) development tokens\neven on a listener beyond loopback: anyone who reaches the server and gets a token can write",
			"embedded mode without a secret or JWKS URL: accept and log development tokens even beyond loopback, where anyone who gets one can write (see [Authentication](authentication.md#authentication))"},
		{"jwt-jwks-url", "JWT_JWKS_URL", val(&c.jwksURL, ""),
			"`URL` of an identity provider's JWKS, to verify its RS256 and ES256 tokens (https)",
			"JWKS of an identity provider, for its RS256 and ES256 tokens (https)"},
		{"jwt-issuer", "JWT_ISSUER", val(&c.jwtIssuer, ""),
			"the iss claim tokens must carry; empty: not checked",
			"the `iss` tokens must carry; empty: not checked"},
		{"jwt-audience", "JWT_AUDIENCE", val(&c.jwtAudience, ""),
			"a value the aud claim of tokens must hold; empty: not checked",
			"a value the `aud` of tokens must hold; empty: not checked"},
		{"reader-jwt-secret", "READER_JWT_SECRET", val(&c.readerSecret, ""),
			"`secret` of HS256 reader tokens, at least 32 bytes, not JWT_SECRET: what a frontend signs readers in\nwith; its tokens may carry no role but reader (prefer the variable: flags show in ps)",
			"secret of HS256 reader tokens, at least 32 bytes, not `JWT_SECRET`: the one a frontend holds; its tokens may carry no role but `reader` (see [Two trust domains](authentication.md#two-trust-domains))"},
		{"reader-jwt-jwks-url", "READER_JWT_JWKS_URL", val(&c.readerJWKSURL, ""),
			"`URL` of the JWKS of an identity provider of readers (https); its tokens may carry no role but reader",
			"JWKS of an identity provider of readers (https); its tokens may carry no role but `reader`"},
		{"reader-jwt-issuer", "READER_JWT_ISSUER", val(&c.readerIssuer, ""),
			"the iss claim reader tokens must carry; empty: that of -jwt-issuer",
			"the `iss` reader tokens must carry; empty: `JWT_ISSUER`'s"},
		{"reader-jwt-audience", "READER_JWT_AUDIENCE", val(&c.readerAudience, ""),
			"a value the aud claim of reader tokens must hold; empty: that of -jwt-audience",
			"a value the `aud` of reader tokens must hold; empty: `JWT_AUDIENCE`'s"},
		{"smtp-url", "SMTP_URL", val(&c.smtpURL, ""),
			"`URL` of the SMTP server that sends emails (sign-in links): smtp://user:password@host:587 (STARTTLS,\nrequired), smtps://user:password@host:465 (TLS), smtp://127.0.0.1:25?tls=none (a relay on loopback);\nempty: emails stay in the table's local outbox (outboxEmails) and the log (prefer the variable: flags show in ps)",
			"SMTP server of the emails: `smtp://user:password@host:587` (STARTTLS, required), `smtps://user:password@host:465` (TLS), `smtp://127.0.0.1:25?tls=none` (a relay on loopback only); empty: emails stay in the local outbox (see [Email](readers.md#email))"},
		{"smtp-from", "SMTP_FROM", val(&c.smtpFrom, ""),
			"the sender of emails, e.g. \"Blog <no-reply@example.com>\"; needed with -smtp-url and -ses-region",
			"the sender of emails, e.g. `Blog <no-reply@example.com>`; needed with `SMTP_URL` and `SES_REGION`"},
		{"ses-region", "SES_REGION", val(&c.sesRegion, ""),
			"send emails by Amazon SES's API in this region (SendEmail, credentials from the SDK's default chain)\ninstead of SMTP; the sender (-smtp-from) must be verified there; not with -smtp-url",
			"send emails by Amazon SES's API in this region (`SendEmail`, credentials from the SDK's default chain) instead of SMTP; `SMTP_FROM` must be verified there; not with `SMTP_URL` (see [Email by Amazon SES](readers.md#email-by-amazon-ses))"},
		{"ses-endpoint", "SES_ENDPOINT", val(&c.sesEndpoint, ""),
			"`URL` of the SES endpoint, e.g. a VPC endpoint; empty: that of -ses-region",
			"SES's endpoint, e.g. a VPC endpoint; empty: that of `SES_REGION`"},
		{"mail-rate", "MAIL_RATE", val(&c.mailRate, defaultMailRate),
			"the most emails a second this server sends (newsletters, sign-in links), 0 to 10000; 0: no limit",
			"the most emails a second this server sends, `0` to `10000`; `0`: no limit; a fleet of n servers sends up to n times as many (see [Newsletter](readers.md#newsletter))"},
		{"public-url", "PUBLIC_URL", val(&c.publicURL, ""),
			"the API's public `URL`, for the links of emails that lead back to it (the newsletter's unsubscribe);\nempty: -site-url's (a frontend that serves or forwards /newsletter/unsubscribe)",
			"the API's public URL, for the links of emails that lead back to it (the newsletter's unsubscribe); empty: `SITE_URL`'s, for a frontend that serves or forwards `/newsletter/unsubscribe`"},
		{"sign-in-link-ttl", "SIGN_IN_LINK_TTL", val(&c.signInLinkTTL, storage.DefaultSignInTTL),
			"how long a reader's sign-in link and code work, 1m to 1h",
			"how long a reader's sign-in link and code work, `1m` to `1h`"},
		{"sign-in-client-addresses", "SIGN_IN_CLIENT_ADDRESSES", val(&c.signInAddresses, storage.DefaultSignInClientAddresses),
			"the most addresses one client address may send sign-in emails to in any hour, 1 to 1000;\npast it RATE_LIMITED (reason CLIENT); one address gets at most 5 an hour whatever this says",
			"the most addresses one client may send sign-in emails to in any hour, 1 to 1000; past it `RATE_LIMITED` (`reason: CLIENT`); one address gets at most 5 an hour whatever this says"},
		{"reader-access-ttl", "READER_ACCESS_TTL", val(&c.readerAccessTTL, graph.DefaultAccessTokenTTL),
			"how long the access token of a reader's session works, 1m to 1h; then refreshSession",
			"how long the access token of a reader's session works, `1m` to `1h`; then `refreshSession`"},
		{"comment-moderation", "COMMENT_MODERATION", val(&c.moderation, moderationHold),
			"what happens to readers' comments: hold (pending until the post's author or an admin approves)\nor publish (at once); authors' comments are never held",
			"readers' comments: `hold` (PENDING until the post's author or an admin approves them) or `publish` (at once); authors' comments are never held"},
		{"moderate-edits", "MODERATE_EDITS", val(&c.moderateEdits, true),
			"with -comment-moderation hold, a reader's edit of their published comment holds it again\nuntil it is approved; false: the edit goes live at once",
			"with `hold`, a reader's edit of their published comment holds it again until it is approved; `false`: the edit goes live at once (see [Moderation](authentication.md#moderation))"},
		{"comment-rate-limit", "COMMENT_RATE_LIMIT", val(&c.commentRate, graph.DefaultCommentsPerMinute),
			fmt.Sprintf("the most comments a reader may add in any minute, 1 to %d; authors and admins have no limit", storage.MaxCommentsPerMinute),
			fmt.Sprintf("the most comments a reader may add in any minute, 1 to %d; authors and admins have no limit", storage.MaxCommentsPerMinute)},
		{"subscriptions-per-connection", "SUBSCRIPTIONS_PER_CONNECTION", val(&c.subsPerConn, graph.DefaultSubscriptionsPerConnection),
			"the most subscriptions one WebSocket connection may hold at once; past it TOO_MANY_SUBSCRIPTIONS",
			"the most subscriptions one WebSocket connection may hold at once; past it a subscription fails with `TOO_MANY_SUBSCRIPTIONS` (see [Live updates](frontend.md#live-updates-subscriptions))"},
		{"streams-per-address", "STREAMS_PER_ADDRESS", val(&c.streamsPerAddr, gqlhttp.DefaultStreamsPerAddress),
			"the most subscription streams (WebSocket connections and SSE responses) open at once from one\nclient address; past it 429 TOO_MANY_CONNECTIONS",
			"the most subscription streams (WebSocket connections and SSE responses) open at once from one client address (the connection's: behind a load balancer, raise it); past it `429` with `TOO_MANY_CONNECTIONS`"},
		{"max-streams", "MAX_STREAMS", val(&c.maxStreams, 0),
			"the most subscription streams open at once on this server, from every address; past it SSE gets 503\nand a WebSocket is closed with 1013, both with Retry-After; 0: half the open-file limit",
			"the most subscription streams open at once on this server, from every address; past it an SSE request gets `503` and a WebSocket is closed with `1013`, both with `Retry-After` (see [Limits of streams](changefeed.md#limits-of-streams)); `0`: half the open-file limit"},
		{"live-window", "LIVE_WINDOW", val(&c.liveWindow, live.DefaultWindow),
			"how many of the event log's last events the server keeps in memory for subscriptions that resume;\nan older cursor gets CURSOR_EXPIRED",
			"how many of the event log's last events the server keeps in memory for subscriptions that resume (about a kilobyte each); an older cursor gets `CURSOR_EXPIRED` (see [Limits of streams](changefeed.md#limits-of-streams))"},
		{"allowed-hosts", "ALLOWED_HOSTS", &c.allowedHosts,
			"`names` besides localhost, 127.0.0.1 and [::1] that requests may be addressed to (Host), separated by commas,\nwhere only those are answered: on a loopback listener (this one, -metrics-addr's, -pprof-addr's) and wherever\ndevelopment tokens are accepted; e.g. the name a proxy on this machine passes on",
			"names, comma-separated, besides `localhost`, `127.0.0.1` and `[::1]` that requests may be addressed to where only those are answered: on a loopback listener (the API's, `-metrics-addr`'s, `-pprof-addr`'s) and wherever development tokens are accepted; e.g. the name a proxy on the same machine passes on as `Host`. Others get `421`"},
		{"platform-host-pattern", "PLATFORM_HOST_PATTERN", &c.platform.hostPattern,
			"`pattern` of the platform's hosts, with {slug}, e.g. {slug}.blogs.example: such a host serves the\npublication of that slug without a host claim; empty: none",
			"the platform's hosts, with `{slug}` once in a label, e.g. `{slug}.blogs.example`: `<slug>.blogs.example` serves the publication of that slug without a host claim (a slug that is not a DNS label matches no host); checked at start; empty: none (see [Publications on one server](platform-operations.md#publications-on-one-server))"},
		{"host-lookup-rate", "HOST_LOOKUP_RATE", val(&c.platform.hostLookups, defaultHostLookups),
			"the most lookups a second of hosts this server does not hold (one GetItem each); past it such a host\ngets 429 RATE_LIMITED; 0: no bound",
			"the most lookups a second (a burst of as many) of hosts this server does not hold, one GetItem each; past it a request for such a host gets `429` `RATE_LIMITED` before any DynamoDB request, so a flood of distinct unknown names is bounded; held hosts are served as before; `0`: no bound (see [Publications on one server](platform-operations.md#publications-on-one-server))"},
		{"publication-rate-limit", "PUBLICATION_RATE_LIMIT", val(&c.platform.publicationRate, 0),
			"the most requests a minute this server serves each publication (a burst of as many);\npast it 429 RATE_LIMITED with Retry-After; 0: no bound",
			"the most requests a minute this server serves each publication, by any of its hosts (a burst of a minute's worth, then a steady rate); past it the publication's requests get `429` `RATE_LIMITED` with `Retry-After`, the other publications' are served; `0`: no bound"},
		{"publication-inflight-share", "PUBLICATION_INFLIGHT_SHARE", val(&c.platform.inflightShare, defaultInflightShare),
			"the percent of -inflight-bytes the requests of one publication may hold; past it they get 503 SERVER_BUSY\nand the rest is left to the others; 100: no share",
			"the percent of `-inflight-bytes` the requests of one publication may hold at once; past it its requests get `503` `SERVER_BUSY` as a server past its budget answers, and the rest of the budget stays for the other publications; `100`: no share (see [Memory of requests in flight](#memory-of-requests-in-flight))"},
		{"publication-execution-slots", "PUBLICATION_EXECUTION_SLOTS", val(&c.platform.executionShare, 0),
			"the most GraphQL requests of one publication executed at once while another's are served too\n(running, waiting, or admitted in the last second); 0: one a CPU core but one (at least 1),\n16 for each of those on AWS; negative: every slot of -execution-slots",
			"the most GraphQL requests of one publication executed at once while another publication's are served too (running, waiting for a slot, or admitted in the last second); its others wait in its queue although slots are free, so a flood of one publication leaves CPU to the others; a server serving one publication gives it every slot; `0`: one for each CPU core the process uses but one (at least 1) on the embedded engine and at `-dynamodb-endpoint` (DynamoDB Local answers every publication from one queue), 16 for each of those on AWS, whose partitions serve publications apart; negative: no share (see [Requests executed at once](platform-operations.md#requests-executed-at-once))"},
		{"metrics-publications", "METRICS_PUBLICATIONS", &c.platform.metricsPublications,
			"`ids` of publications the metrics label by id, separated by commas, besides the first 100 served;\nthe others count as \"other\"",
			"ids, comma-separated, of publications the per-publication metrics label by id besides the first 100 a server serves; every other publication counts under `other` (see [Publications on one server](platform-operations.md#publications-on-one-server))"},
		{"cors-origins", "CORS_ORIGINS", &c.corsOrigins,
			"`origins` (scheme://host[:port], separated by commas) whose pages may call /graphql from a browser (CORS);\nno wildcard; empty: none, the playground needs none",
			"origins, comma-separated, exact (`https://app.example.com`, `http://localhost:5173`), whose pages may call `/graphql` from a browser; no wildcard; empty: none (see [GraphQL over HTTP](frontend.md#graphql-over-http))"},
		{"views-client-ip-header", "VIEWS_CLIENT_IP_HEADER", val(&c.viewsClientHeader, ""),
			"`header` whose last address is the client's for counting views (the proxy in front sets it,\ne.g. X-Forwarded-For); empty: the connection's peer address",
			"the header whose last address is the reader's for counting views, set or appended to by the proxy in front (`X-Forwarded-For`, `Fly-Client-IP`…); empty: the connection's peer address, which behind a proxy is the proxy's, so every reader looks like one (see [Views and reactions](engagement.md))"},
		{"max-query-bytes", "MAX_QUERY_BYTES", val(&c.maxQueryBytes, gqlhttp.DefaultMaxQueryBytes),
			"the longest query document a request may send, in bytes, a persisted query's included;\nlonger ones are refused before they are parsed (send long values in variables)",
			"the longest query document (`query`, a persisted query's registration included) a request may send, in bytes; longer is `QUERY_SIZE_LIMIT_EXCEEDED` before it is parsed (see [Limits and errors](errors.md))"},
		{"query-cache-bytes", "QUERY_CACHE_BYTES", val(&c.queryCacheBytes, gqlhttp.DefaultQueryCacheBytes),
			"memory, in bytes, of the parsed documents kept for requests that send the same query again;\n0: none kept",
			"memory of the parsed documents kept for requests that send the same query again; `0`: none kept"},
		{"persisted-query-cache-bytes", "PERSISTED_QUERY_CACHE_BYTES", val(&c.apqCacheBytes, gqlhttp.DefaultPersistedQueryCacheBytes),
			"memory, in bytes, of the automatic persisted queries kept; 0: none kept",
			"memory of the automatic persisted queries kept; `0`: none kept (a hash alone is then `PERSISTED_QUERY_NOT_FOUND`, and none is kept in the table)"},
		{"persisted-query-writes", "PERSISTED_QUERY_WRITES", val(&c.apqWrites, gqlhttp.DefaultPersistedQueryWrites),
			"automatic persisted queries this server registers in the table a second, at most;\npast it a registration's query runs and is kept in memory only; 0: none written",
			"automatic persisted queries this server registers in the table a second, at most (see [HTTP caching](frontend.md#http-caching)); past it a registration's query runs and is kept in this server's memory only; `0`: none written"},
		{"allow-private-urls", "ALLOW_PRIVATE_URLS", val(&c.privateURLs, false),
			"let cover image, canonical, Open Graph and avatar URLs name localhost and loopback, private\nand link-local addresses (for development: frontends and crawlers would fetch them)",
			"let cover image, canonical, `ogImage` and avatar URLs name `localhost` and loopback, private and link-local addresses: for development only, since frontends and crawlers fetch them"},
		{"heading-id-prefix", "HEADING_ID_PREFIX", val(&c.headingIDPrefix, markdown.DefaultHeadingIDPrefix),
			"what starts the id of every heading and footnote of a rendered body and the anchors of its table of\ncontents, so that no post's id clashes with the page's own (# Root gets id=\"h-root\"); empty: the bare slug.\nBodies render when written; a change re-renders the stored ones in the background",
			"what starts the id of every heading and footnote of a rendered body and the anchors of its `toc` (`# Root` gets `id=\"h-root\"`), so that a post's ids never clash with, or clobber, the page's own elements (`root`, `config`, `cookie`…); empty: the bare slug; a letter, then letters, digits, `-` and `_`, at most 32. Bodies are rendered when written; after a change the stored ones are rendered again in the background (see [Rendering and re-rendering](#rendering-and-re-rendering))"},
		{"highlight-code", "HIGHLIGHT_CODE", val(&c.highlightCode, false),
			"highlight fenced code of a few languages (Go, JavaScript, Python, Ruby, Rust, shell) when a body is\nwritten, with chroma's CSS classes (no inline styles); a change re-renders the stored bodies in the background",
			"highlight fenced code in Go, JavaScript, Python, Ruby, Rust and shell when a body is written, with chroma's CSS classes, never inline styles (the frontend adds a theme: see [The HTML a post serves](frontend.md#the-html-a-post-serves)); a change re-renders the stored bodies in the background (see [Rendering and re-rendering](#rendering-and-re-rendering))"},
		{"webhooks-allow-private-unsafe", "WEBHOOKS_ALLOW_PRIVATE_UNSAFE", val(&c.webhooksPrivate, false),
			"UNSAFE: let webhooks be delivered to loopback, private and link-local addresses (cloud metadata\nincluded), so that anyone who may create a webhook reaches the server's network; for tests and local receivers",
			"**unsafe**: deliver webhooks to loopback, private and link-local addresses (cloud metadata included) too, which lets whoever creates a webhook reach the server's network; for tests and a receiver on the same machine (see [Webhooks](webhooks.md#for-operators))"},
		{"webhooks-allow-http", "WEBHOOKS_ALLOW_HTTP", &c.webhooksHTTP,
			"let webhook URLs be plain http://: true, false or auto (auto: true for the embedded engine only)",
			"let webhook URLs be plain `http://` (auto: the embedded engine only)"},
		{"migrate", "MIGRATE", val(&c.migrate, migrateAuto),
			"bring a table written by an earlier version to the current layout: auto (at start, before serving;\none read when there is nothing to do), only (do it, then exit without serving) or off (never; the log says\nwhen the table needs it)",
			"bring a table written by an earlier version to the current layout: `auto` (at start, before serving; one GetItem when there is nothing to do), `only` (migrate, then exit) or `off` (never; logs a warning when the table needs it); see [Upgrading a table](#upgrading-a-table)"},
		{"event-retention", "EVENT_RETENTION", val(&c.eventRetention, feedstore.DefaultEventRetention),
			"how long the change feed's events stay in the event log (their TTL), at least 1m:\nhow long a server or a worker may be away and still catch up",
			"how long the change feed's events stay in the event log (their TTL), at least `1m`: how long a server or a worker may be away and still catch up (see [Change feed](changefeed.md))"},
		{"read-stream", "READ_STREAM", val(&c.readStream, true),
			"read the table's stream and log its events (the change feed's shards, under leases);\nfalse: something else does, e.g. a Lambda on the stream; the server still reads the event log",
			"read the table's stream and append its events to the event log, under leases; `false`: something else does, e.g. [a Lambda on the stream](changefeed.md#the-feed-at-aws-scale-a-lambda-on-the-stream); the server still reads the log and runs workers"},
		{"site-url", "SITE_URL", val(&c.siteURL, ""),
			"public `URL` of the blog's frontend (https://blog.example.com), which every link of the feeds and the\nsitemap starts with; empty: the server's own address with the embedded engine, else they answer 503",
			"public URL of the blog's frontend, e.g. `https://blog.example.com` (a path prefix allowed), which every link of the feeds and the sitemap starts with; empty: the server's own address with the embedded engine, elsewhere they answer `503` (see [Feeds and sitemap](feeds.md))"},
		{"site-title", "SITE_TITLE", val(&c.siteTitle, "Blog"),
			"the blog's name, the title of its feeds (a category's or an author's feed adds its name)",
			"the blog's name, the title of its feeds (a category's or an author's feed adds its name)"},
		{"site-description", "SITE_DESCRIPTION", val(&c.siteDescription, ""),
			"what the blog is about, the description of its feed; empty: \"The latest posts of\" and the title",
			"what the blog is about, the description of its feed; empty: \"The latest posts of\" and the title"},
		{"post-path", "POST_PATH", val(&c.paths.Post, frontend.DefaultPaths.Post),
			"the frontend's path of a post: {slug}, and optionally {yyyy}, {mm} and {dd} of its publication (UTC);\nfeeds, the sitemap and the change feed's events link with it",
			"the frontend's path of a post, with `{slug}` and optionally `{yyyy}`, `{mm}` and `{dd}` of its publication (UTC), e.g. `/blog/{yyyy}/{mm}/{slug}`; the feeds, the sitemap and the change feed's events (`paths`) link with it"},
		{"author-path", "AUTHOR_PATH", val(&c.paths.Author, frontend.DefaultPaths.Author),
			"the frontend's path of an author's page, with {slug}; empty: none",
			"the frontend's path of an author's page, with `{slug}`; empty: none (left out of the sitemap and events)"},
		{"category-path", "CATEGORY_PATH", val(&c.paths.Category, frontend.DefaultPaths.Category),
			"the frontend's path of a category's page, with {slug}; empty: none",
			"the frontend's path of a category's page, with `{slug}`; empty: none (left out of the sitemap and events)"},
		{"archive-path", "ARCHIVE_PATH", val(&c.paths.Month, frontend.DefaultPaths.Month),
			"the frontend's path of a month's archive, with {yyyy} and {mm}; empty: none",
			"the frontend's path of a month's archive, with `{yyyy}` and `{mm}`; empty: none (left out of the sitemap and events)"},
		{"page-path", "PAGE_PATH", val(&c.paths.Page, frontend.DefaultPaths.Page),
			"the frontend's path of a static page, with {slug}; empty: none",
			"the frontend's path of a static page, with `{slug}`; pages share the posts' slugs, so `/{slug}` never meets a post (see [Frontend guide](frontend.md)); empty: none (left out of events)"},
		{"tag-path", "TAG_PATH", val(&c.paths.Tag, frontend.DefaultPaths.Tag),
			"the frontend's path of a tag's page, with {slug}; empty: none",
			"the frontend's path of a tag's page, with `{slug}`; empty: none (left out of events)"},
		{"feed-content", "FEED_CONTENT", val(&c.feedContent, string(syndication.ContentFull)),
			"what the items of feeds carry: full (the post's HTML, and its excerpt as summary) or excerpt",
			"what the items of the feeds carry: `full` (the post's rendered HTML, and its excerpt as the summary) or `excerpt`"},
		{"search-index", "SEARCH_INDEX", val(&c.searchIndex, ""),
			"`directory` of this server's search index, rebuilt from the table when missing; empty: search/ in -data\n(search-<table>/ on DynamoDB; in memory with -data " + memoryData + ")",
			"directory of this server's search index, rebuilt from the table when missing or too old; empty: `search/` in `-data`, `search-<table>/` there on DynamoDB (whose data the directory does not hold otherwise; the Docker image's `/data` volume), in memory with `-data " + memoryData + "`; see [Search](search.md)"},
		{"search-language", "SEARCH_LANGUAGE", val(&c.searchLanguage, search.DefaultLanguage),
			"language of the search index's stemming and stop words for posts without a locale\n(or in a language without an analyzer): " + strings.Join(search.Languages, ", ") + "\n(standard: none); changing it rebuilds the index",
			"language of the search index's stemming and stop words for posts without a locale (or in a language without an analyzer): " + strings.Join(search.Languages, ", ") + " (`standard`: no stemming); a post with a locale is indexed in its own language ([i18n](i18n.md)); changing it rebuilds the index"},
		{"search-open-indexes", "SEARCH_OPEN_INDEXES", val(&c.searchOpenIndexes, search.DefaultMaxOpen),
			"how many publications' search indexes (besides the default publication's) this server keeps open;\npast it the least recently used closes, and opens again when searched or written",
			"how many publications' search indexes, besides the default publication's, this server keeps open at once (one index each, opened when the publication is first searched or written); past it the least recently used is closed (kept in `-search-index`'s `publications/` when on disk) and opened again when needed (see [Search of many publications](platform-operations.md#search-of-many-publications))"},
		{"media-bucket", "MEDIA_BUCKET", val(&c.media.bucket, ""),
			"S3 `bucket` of the media library; empty: the S3-compatible store embedded in the server,\nkept in " + mediaFile + " in -data, taking presigned uploads at /s3/ on this server",
			"S3 bucket of the media library; empty: the S3-compatible store embedded in the server, kept in `" + mediaFile + "` in `-data`, taking presigned uploads at `/s3/` on this server (see [Media library](media.md))"},
		{"media-s3-endpoint", "MEDIA_S3_ENDPOINT", val(&c.media.endpoint, ""),
			"S3 endpoint `URL` of -media-bucket (an S3-compatible server, a VPC endpoint); empty: AWS's",
			"S3 endpoint URL of `-media-bucket` (an S3-compatible server, a VPC endpoint); empty: AWS's for `-media-s3-region`"},
		{"media-s3-region", "MEDIA_S3_REGION", val(&c.media.region, ""),
			"region of -media-bucket; empty: -region",
			"region of `-media-bucket`; empty: `-region`"},
		{"media-s3-path-style", "MEDIA_S3_PATH_STYLE", val(&c.media.pathStyle, false),
			"address -media-bucket in the URL's path, as S3-compatible servers want",
			"address `-media-bucket` in the URL's path (`endpoint/bucket/key`), as S3-compatible servers want"},
		{"media-url", "MEDIA_URL", val(&c.media.url, ""),
			"this server's public `URL`, which starts the URLs of renditions (/media/...) and of the embedded store's uploads;\nempty: the address it listens on",
			"this server's public URL, which starts the URLs of renditions (`/media/<id>/<width>.<format>`) and of the embedded store's uploads; empty: the address it listens on"},
		{"media-max-bytes", "MEDIA_MAX_BYTES", val(&c.media.maxBytes, int64(media.DefaultMaxBytes)),
			"largest upload to the media library, in bytes",
			"largest upload to the media library, in bytes"},
		{"media-max-pixels", "MEDIA_MAX_PIXELS", val(&c.media.maxPixels, int64(media.DefaultMaxPixels)),
			"most pixels an uploaded image may have, read from its header before it is decoded",
			"most pixels an uploaded image may have, read from its header before it is decoded (decompression bombs stop there)"},
		{"media-avif", "MEDIA_AVIF", val(&c.media.avif, false),
			"offer AVIF renditions too (slow to encode: see BENCHMARKS.md)",
			"offer AVIF renditions too; they are slow to encode (see BENCHMARKS.md)"},
		{"media-workers", "MEDIA_WORKERS", val(&c.media.workers, 0),
			"renditions made at once; 0: one fewer than the cores (GOMAXPROCS), at least 1",
			"renditions made at once (decoding, scaling and encoding, a core each); 0: one fewer than the cores the server runs on (`GOMAXPROCS`), at least 1, so a core is left to pages while a burst of renditions is made (see [Rendition workers](#rendition-workers))"},
		{"media-quota-bytes", "MEDIA_QUOTA_BYTES", val(&c.media.quotaBytes, int64(0)),
			"most bytes of media each publication's library may hold; 0: no bound",
			"most bytes of media each publication's library may hold, checked when an upload starts and when it completes; 0: no bound (see [Media library](media.md))"},
		{"media-quota-files", "MEDIA_QUOTA_FILES", val(&c.media.quotaFiles, int64(0)),
			"most media items each publication's library may hold; 0: no bound",
			"most media items each publication's library may hold; 0: no bound"},
		{"quota-posts", "QUOTA_POSTS", val(&c.quota.Posts, int64(0)),
			"most posts (drafts included) each publication may have, unless a platform admin set its own; 0: no bound",
			"most posts each publication may have, drafts and scheduled ones included, unless a platform admin set its own limit (`setPublicationLimits`); 0: no bound (see [Publication quotas](operations.md#publication-quotas))"},
		{"quota-webhooks", "QUOTA_WEBHOOKS", val(&c.quota.Webhooks, int64(0)),
			"most webhook subscriptions each publication may have, unless a platform admin set its own; 0: no bound",
			"most webhook subscriptions each publication may have, unless a platform admin set its own limit; 0: no bound, but never more than 100"},
	}
}

// val sets *p to def and returns the flag package's own value for p, so
// that -h names its type and a bool is a flag without argument.
func val[T string | int | int64 | bool | time.Duration](p *T, def T) flag.Value {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	switch p := any(p).(type) {
	case *string:
		fs.StringVar(p, "v", any(def).(string), "")
	case *int:
		fs.IntVar(p, "v", any(def).(int), "")
	case *int64:
		fs.Int64Var(p, "v", any(def).(int64), "")
	case *bool:
		fs.BoolVar(p, "v", any(def).(bool), "")
	case *time.Duration:
		fs.DurationVar(p, "v", any(def).(time.Duration), "")
	}
	return fs.Lookup("v").Value
}

// levelValue is a log level as a flag, shown in lower case as it is
// written; its zero is info.
type levelValue struct{ l *slog.Level }

func (v levelValue) String() string {
	if v.l == nil {
		return ""
	}
	return strings.ToLower(v.l.String())
}

func (v levelValue) Set(s string) error { return v.l.UnmarshalText([]byte(s)) }

// readmeTable returns docs/operations.md's table of settings, in Markdown: each
// setting's flag, variable, default and meaning.
func readmeTable() string {
	var b strings.Builder
	b.WriteString("| flag | variable | default | meaning |\n|---|---|---|---|\n")
	for _, s := range settings(&config{}) {
		fmt.Fprintf(&b, "| `-%s` | `%s` | %s | %s |\n", s.name, s.env, readmeDefault(s.value), s.doc)
	}
	return b.String()
}

// readmeDefault returns v's value as the docs show a default: "empty",
// "auto", or the value as code (a duration without its zero units, a
// number of whole mebibytes with their count).
func readmeDefault(v flag.Value) string {
	s := v.String()
	if _, ok := v.(*autoBool); ok {
		return s
	}
	if s == "" {
		return "empty"
	}
	if _, err := time.ParseDuration(s); err == nil {
		if t, ok := strings.CutSuffix(s, "m0s"); ok {
			s = t + "m"
		}
		if t, ok := strings.CutSuffix(s, "h0m"); ok {
			s = t + "h"
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("`%s` (%d MiB)", s, n>>20)
	}
	return "`" + s + "`"
}

// Package storage keeps the blog in one DynamoDB table (single-table
// design) and is the only package that knows it. It exports plain domain
// types, sentinel errors and a Store; item shapes and keys stay inside.
//
// # Table
//
// Key attributes PK and SK (strings); GSI1 on GSI1PK/GSI1SK (strings,
// projection ALL). Times inside keys are fixed-width UTC
// (2006-01-02T15:04:05.000Z), so string order is time order. Every item has
// a "type" attribute naming its shape.
//
// Every item of a publication lives under its tenant prefix, written <P>
// below: "PUB#<pubId>#", before its partition key and its GSI1 partition
// ("PUB#p1#POST#<id>", "PUB#p1#FEED"), so one publication's traffic never
// shares a partition with another's, and a request of a publication names
// no key outside its space (the tenant guard of the table primitives,
// storage/internal/dynamo/guard.go). Sort keys carry no prefix. The few
// global items have none (see Publications, doc_layout.go).
//
//	item                     PK                         SK                                                           GSI1PK / GSI1SK
//	author                   <P>AUTHOR#<id>             AUTHOR#<id>                                                  <P>AUTHORS / AUTHOR#<createdAt>#<id>   (slug, slugs, postCount, scheduled, month#<YYYY-MM>)
//	post (published)         <P>POST#<id>               POST#<id>                                                    <P>FEED / POST#<publishedAt>#<id>
//	post (draft)             <P>POST#<id>               POST#<id>                                                    <P>DRAFT#<authorId> / DRAFT#<createdAt>#<id>
//	post's count item        <P>POST#<id>               POST#<id>#COUNT                                              (commentCount, threadCount, status, publishedAt, authorId)
//	post's body item         <P>POST#<id>               POST#<id>#TEXT                                               (body, bodyHtml, toc, renderVersion)
//	author→post copy         <P>AUTHOR#<authorId>       POST#<publishedAt>#<id>                                      [<P>LOCALE#<locale>#AUTHOR#<authorId> / POST#<publishedAt>#<id> for a post with a locale]   (one per author of the post: primary and co-authors)
//	post-in-category copy    <P>POST#<id>               CAT#<slug>                                                   <P>CAT#<slug> / POST#<publishedAt>#<id>
//	post-in-tag copy         <P>POST#<id>               TAG#<slug>                                                   <P>TAG#<slug> / POST#<publishedAt>#<id>
//	post-in-locale copy     <P>POST#<id>               LOCALE#<locale>                                              <P>LOCALE#<locale> / POST#<publishedAt>#<id>   (a published post with a locale)
//	category-in-locale copy <P>POST#<id>               LOCALECAT#<slug>                                             <P>LOCALE#<locale>#CAT#<slug> / POST#<publishedAt>#<id>   (a published post with a locale, one per category)
//	tag-in-locale copy      <P>POST#<id>               LOCALETAG#<slug>                                             <P>LOCALE#<locale>#TAG#<slug> / POST#<publishedAt>#<id>   (a published post with a locale, one per tag)
//	tag                      <P>TAG#<slug>              TAG#<slug>                                                   <P>TAGS / TAG#<slug>                   (name, postCount, scheduled, month#<YYYY-MM>; mergedInto and no GSI1 once merged)
//	category                 <P>CAT#<slug>              CAT#<slug>                                                   <P>CATEGORIES / CAT#<slug>             (postCount, scheduled, month#<YYYY-MM>)
//	comment (top level)      <P>POST#<postId>           COMMENT#<createdAt>#<commentId>                              (replyCount, replies: the first 10)
//	reply                    <P>POST#<postId>           THREAD#<parentCreatedAt>#<parentId>#<createdAt>#<commentId>
//	comment (pending)        <P>POST#<postId>           HELD#<createdAt>#<commentId>                                 <P>MODQ#<postAuthorId> / <createdAt>#<postId>#<commentId>
//	comment (rejected)       <P>POST#<postId>           HELD#<createdAt>#<commentId>                                 (expiresAt TTL)
//	admins' queue entry      <P>MODQ                    <createdAt>#<postId>#<commentId>                             (copy of a pending comment)
//	reader                   READER#<sub>               READER#<sub>                                                 (name, avatarUrl)
//	reader's rate            <P>RATE#READER#<sub>       (same)                                                       (recent, version, expiresAt TTL)
//	slug reservation         <P>SLUG#<slug>             SLUG#<slug>                                                  (postId, redirect, prevPostId, publicAt; or pageId, redirect)
//	static page (published)  <P>PAGE#<id>               PAGE#<id>                                                    <P>PAGES / PAGE#<5-digit order>#<id>   (body, bodyHtml, toc, renderVersion, seo, slugs, parentId)
//	static page (draft)      <P>PAGE#<id>               PAGE#<id>                                                    <P>PAGEDRAFTS / PAGE#<5-digit order>#<id>
//	page-in-locale copy      <P>PAGE#<id>               LOCALEPAGE                                                   <P>LOCALE#<locale>#PAGES / PAGE#<5-digit order>#<id>   (a published page with a locale: the page item but transGroup/transVer; pagelocales.go)
//	site settings            <P>SITE                    SITE                                                         (title, description, url, postPath, menus, social, version)
//	author slug reservation  <P>AUTHORSLUG#<slug>       AUTHORSLUG#<slug>                                            (authorId, redirect)
//	blog-wide counts         <P>STATS                   STATS                                                        (postCount, scheduled, month#<YYYY-MM>, authorCount, categoryCount, pageCount)
//	idempotency record       <P>IDEMPOTENCY#<op>#<key>  (same)                                                       (hash, result, expiresAt TTL)
//	server key               SECRET#<name>              SECRET#<name>                                                (value: 32 random bytes)
//	shard lease              LEASES                     SHARD#<shardId>                                              (owner, released, checkpoint, finished)
//	worker lease             LEASES                     WORKER#<name>                                                (owner, released, position)
//	server's heartbeat       LEASES                     SERVER#<owner>                                               (leaseUntil, expiresAt)
//	event log head           EVENTLOG                   HEAD                                                         (seq: the last position)
//	logged events            EVENTLOG                   EVENT#<20-digit position of the last>                        (position, events: an append's JSON up to 64 KB an item, or event: one, expiresAt TTL)
//	schedule item            <P>SCHEDULE                <publishedAt>#<postId>                                       GOLIVE / <publishedAt>#<pubId>#<postId>   (postId, at: a scheduled post not yet gone live; GOLIVE is global: schedule_index.go)
//	webhook                  <P>WEBHOOKS                WEBHOOK#<id>                                                 (url, events, enabled, secret, previousSecret until previousUntil, logAfter)
//	webhooks' count          <P>WEBHOOKS                COUNT                                                        (count, at most 100 and the quota; webhooksMax: the publication's own quota, 0 no bound; quotas.go)
//	outbox item (pending)    <P>WEBHOOK#<id>            OUTBOX#<eventId>                                             <P>OUTBOX / <nextAttemptAt>#<webhookId>#<eventId>   (body, attempts)
//	outbox item (done)       <P>WEBHOOK#<id>            OUTBOX#<eventId>                                             (state DELIVERED or FAILED, expiresAt TTL: 7 days)
//	delivery (history)       <P>WEBHOOK#<id>            DELIVERY#<at>#<eventId>#<attempt>                            (statusCode, durationMs, error, nextAttemptAt, expiresAt TTL: 7 days)
//	renderer                 <P>RENDERER                RENDERER                                                     (version, claimedAt, done, marks: rerender.go; walkDone, walkPass, walkAfter, walkRendered: the default publication's, rerender_walk.go)
//	featured copy            <P>POST#<id>               FEATURED                                                     <P>FEATURED / POST#<publishedAt>#<id>   (a published featured post's summary)
//	series                   <P>SERIES#<slug>           SERIES#<slug>                                                <P>SERIES / SERIES#<slug>   (title, description, cover, ownerId, posts: ids in order, version)
//	revision                 <P>POST#<id>               REV#<10-digit n>                                             (n, editorId, at, fields, title, excerpt, body or bodyless, cover, seo, version)
//	translation group        <P>TRANSLATIONS#<id>       TRANSLATIONS#<id>                                            (members: locale → postId or pageId, two or more; kind: page for pages; version; translations.go)
//	post's views             <P>POST#<id>               VIEWS                                                        (views: all time; flushed at most once a second a post a server: views.go)
//	post's views of a day    <P>POST#<id>               VIEWS#<yyyy-mm-dd>                                           (views, referrers: domain → count; expiresAt TTL: 400 days)
//	popular entry            <P>POST#<id>               POPULAR#<DAY|WEEK|MONTH>#<bucket>                            <P>POPULAR#<period>#<bucket> / <15-digit views>#<id>   (expiresAt TTL)
//	reactions' counts        <P>POST#<id>               REACTIONS#<POST or commentId>                                (one count per kind, never below 0: reactions.go)
//	a reader's reactions     <P>POST#<id>               REACT#<POST or commentId>#<readerId>                         (kinds: a string set)
//	page index chunk         <P>PAGENUM#<list>          CHUNK#<6-digit chunk>                                        (list: FEED, FEED@<yyyy-mm>, CAT#<slug>, TAG#<slug> or AUTHOR#<id>; count on chunk 0; starts: GSI1SK (an author's: SK) of every 10th post, oldest first, 80 a chunk; at; fence: the claim of the rebuild writing it)
//	upload (pending)         <P>UPLOAD#<id>             UPLOAD#<id>                                                  (owner, filename, contentType, byteSize, expiresAt TTL: 24 hours)
//	media item               <P>MEDIA#<id>              MEDIA#<id>                                                   <P>MEDIA / <createdAt>#<id>   (owner, filename, format, width, height, byteSize, dominantColor, placeholder, alt; bytes in the bucket, package media)
//	media library's usage    <P>MEDIAUSAGE              MEDIAUSAGE                                                   (bytes, files: of the media items, kept in their transactions; the quota bounds them: mediaquota.go)
//	posts' counter           <P>POSTUSAGE               POSTUSAGE                                                    (posts: every post, drafts included, kept in the transactions that create and delete them under the quota's condition; postsMax: the publication's own quota, 0 no bound; quotas.go)
//	member                   <P>MEMBER#<accountId>      MEMBER#<accountId>                                           <P>MEMBERS / <email>#<accountId>   (accountId, email, emailVerified, tier: FREE, newsletter: on or off, newsletters: a string set, createdAt, lastSeenAt: a reader who signed in on the publication)
//	staff member             <P>STAFF#<accountId>       STAFF#<accountId>                                            <P>STAFF / <accountId>             (accountId, email, role: OWNER|ADMIN|EDITOR|AUTHOR|CONTRIBUTOR, createdAt, updatedAt, version: staff.go)
//	owners' count            <P>STAFFCOUNT              STAFFCOUNT                                                                                      (owners: updated in every transaction that makes, unmakes or removes an owner, on the condition that one is left: staff.go)
//	newsletter sending       <P>NEWSLETTER#<postId>     NEWSLETTER#<postId>                                          (state: SENDING or SENT, pages, enqueued, after: the last member done; newsletter.go)
//	publication directory    PUBLICATION#<pubId>        PUBLICATION#<pubId>                                          PUBLICATIONS / <slug>   (id, slug, title, hosts, status, createdAt, updatedAt, version: global; publications.go)
//	publication slug claim   PUBLICATIONSLUG#<slug>     (same)                                                       (publicationId, createdAt: global)
//	host claim               HOST#<host>                (same)                                                       (publicationId, createdAt: global; one per host of a publication)
//	reader's trail entry     READER#<readerId>          TRAIL#<pubId>#<COMMENT|REACT|MEMBER>[#<ref>]                 (createdAt: global; one per comment, reaction or membership, written in its transaction: privacy.go)
//	layout                   LAYOUT                     LAYOUT                                                       (version, migratedAt: global)
//	layout 5 checkpoint      LAYOUT                     MIGRATION#5                                                  (lastPK, lastSK: while the migration to layout 5 runs)
//	account                  ACCOUNT#<id>               ACCOUNT#<id>                                                 (email, emailVerified, createdAt, signedInAt: a reader's platform account; global)
//	account's address        ACCOUNTEMAIL#<email>       (same)                                                       (accountId, createdAt; global)
//	reader session           ACCOUNT#<id>               SESSION#<sessionId>                                          (refreshHash, replaced: hashes, lastUsedAt, userAgent, publication: where it was made, expiresAt TTL: 30 days idle; global)
//	sign-in request          SIGNIN#<tokenHash>         (same)                                                       SIGNINCODE#<email> / <createdAt>   (email, accountId, redirectTo, codeHash, attempts, expiresAt; global)
//	sign-in rate             SIGNINRATE#EMAIL#<email>   (same)                                                       (sent: <at>#<address hash>, version, expiresAt TTL; global; SIGNINRATE#CLIENT#<address> the same per client)
//	email (pending)          MAILBOX                    MAIL#<createdAt>#<id>                                        MAILQ / <nextAttemptAt>#<id>   (to, subject, text, html, kind, attempts; global; a sign-in email in MAILQ#URGENT, its own lane)
//	email (sent or failed)   MAILBOX                    MAIL#<createdAt>#<id>                                        (state, transport, lastError, expiresAt TTL: 7 days; bodies gone once sent by SMTP; global)
//
// A post is three items (see Posts in three items, doc_layout.go): the
// post item, a summary; its body item, the Markdown body and what is
// rendered from it (bodyHtml, toc), written only when the body changes;
// and its count item, the exact comment counts with what a comment's
// transaction checks. The post item holds what is derived from the body
// that lists show (words, minutes, autoExcerpt), the renderer's version
// (renderVersion) and sums of the body and its HTML (bodySum, htmlSum);
// its cover (url, alt, width, height), its seo fields and its slugs;
// featured, the slug of its series (series) and the count of its
// revisions (revisions); and the comment counts its summaries show.
// Copies are summaries: every attribute of the post item but seo, slugs,
// threadCount, series, revisions, renderVersion and the sums; so a
// listing shows the cover, the word count, the reading time and the
// excerpt with no extra read, and asks for the post's items (one
// BatchGetItem for the page) only when it selects the body, its HTML,
// its table of contents or the SEO fields.
// Posts and copies carry the author's name and slug and the categories'
// names (authorName, authorSlug, cats) together with the version of each
// name they hold (authorVer, catVer), so lists need no extra reads; a
// rename or an author's new slug rewrites them (below). They carry the
// co-authors' and tags' names the same way (coAuthors, coAuthorVer, tags,
// tagVer: see Co-authors and tags).
//
// # Access patterns
//
//	pattern                              request
//	post by id, with its body and counts Query PK=POST#id, SK BETWEEN "POST#id" AND "POST#id#TEXT"
//	                                     (AND "POST#id#COUNT" without the body; BatchGetItem of the three
//	                                     keys of each post for many)
//	post by slug (current or old)        GetItem SLUG#slug, then the Query of POST#id (POST#- for a free
//	                                     slug: the same requests); the Query of its comments beside it
//	                                     when the current slug's publicAt (the publishedAt of a post
//	                                     published, written with it) is past
//	author by slug (current or old)      GetItem AUTHORSLUG#slug, then GetItem AUTHOR#id
//	author's posts, newest first         Query PK=AUTHOR#id, SK BETWEEN "POST#<from>" AND "POST#<now>$", descending
//	                                     (AND "POST#~" for the author and admins: scheduled posts too)
//	author's drafts                      Query GSI1 GSI1PK=DRAFT#authorId, descending
//	category's posts, newest first       Query GSI1 GSI1PK=CAT#slug, GSI1SK BETWEEN "POST#<from>" AND "POST#<now>$", descending
//	tag's posts, newest first            Query GSI1 GSI1PK=TAG#slug, the same bounds (co-authors and tags: below)
//	tag by slug                          GetItem TAG#slug (one more for a tag merged into another)
//	all tags with their post counts      Query GSI1 GSI1PK=TAGS
//	latest posts, whole blog             Query GSI1 GSI1PK=FEED, GSI1SK BETWEEN "POST#<from>" AND "POST#<now>$" (summaries)
//	previous / next post, whole blog     the same Query, GSI1SK BETWEEN "POST#" AND <post's> (descending) or <post's> AND "POST#<now>$", Limit 2
//	previous / next post in a category   Query GSI1 GSI1PK=CAT#slug, the same bounds, Limit 2
//	post's comments, oldest first        Query PK=POST#id, begins_with(SK, "COMMENT#"); each brings its first 10 replies
//	more replies of one comment          Query PK=POST#id, begins_with(SK, "THREAD#<parent>#"), after the cursor
//	webhooks                             Query PK=WEBHOOKS, begins_with(SK, "WEBHOOK#")
//	webhook deliveries due               Query GSI1 GSI1PK=OUTBOX, GSI1SK < "<now>$"
//	a webhook's recent deliveries        Query PK=WEBHOOK#id, begins_with(SK, "DELIVERY#"), descending
//	pending comments on an author's      Query GSI1 GSI1PK=MODQ#authorId, descending
//	posts, newest first
//	all pending comments, newest first   Query PK=MODQ, descending
//	comment by id                        BatchGetItem of its COMMENT#/THREAD# key and its HELD# key
//	who wrote comments                   BatchGetItem of AUTHOR#id and READER#sub keys together
//	all authors / all categories         Query GSI1 GSI1PK=AUTHORS / CATEGORIES
//	numbered page n of size z           BatchGetItem of PAGENUM#<list> CHUNK#000000 (the count) and the chunk holding
//	(feed, a month of it, category, tag, start (n-1)*z/10 (with CAT#slug or AUTHOR#id when the parent is asked for),
//	author; oldest first)                then Query GSI1 GSI1PK=<list>, GSI1SK BETWEEN <start> AND "POST#<now>$" (a month:
//	                                     and its end; an author: the table, PK=AUTHOR#id, SK), ascending, Limit z
//	                                     (none past the end): see Numbered pages
//	numbered page n of a series          BatchGetItem of the POST#id items at places (n-1)*z+1..n*z of SERIES#slug's order
//	featured posts, newest first         Query GSI1 GSI1PK=FEATURED, GSI1SK BETWEEN "POST#" AND "POST#<now>$"
//	series by slug / all series          GetItem SERIES#slug / Query GSI1 GSI1PK=SERIES
//	a series' posts, in order            GetItem SERIES#slug, then BatchGetItem of a page of its ids (+5)
//	a post's place in its series         GetItem SERIES#<post's series>; neighbours: BatchGetItem of 5 each way
//	a post's revisions, newest first     Query PK=POST#id, begins_with(SK, "REV#"), descending
//	  with bodies, when one above the page's last body is bodyless: + Query PK=POST#id, SK BETWEEN REV#<n+1> AND REV#9999999999, ascending, to the first body (+ GetItem POST#id#TEXT when none)
//	authors, categories, posts by id     BatchGetItem, 100 keys a call, UnprocessedKeys retried with backoff
//	blog-wide counts, archive by month   GetItem STATS (an author's or a category's: their own item, no extra read)
//	static page by slug (current or old) GetItem SLUG#slug, then GetItem PAGE#id (PAGE#- when a post or
//	                                     nothing holds the slug: the same cost)
//	static pages for a menu, by order    Query GSI1 GSI1PK=PAGES (PAGEDRAFTS for the drafts), ascending
//	a locale's static pages, by order    Query GSI1 GSI1PK=LOCALE#<locale>#PAGES, ascending
//	site settings                        GetItem SITE, held in the server's memory (below)
//	drafts' / moderation queue's total   Query of the list's partition, Select COUNT (+1 per MB)
//	post before a write                  the Query of POST#id and POST#id#COUNT, ConsistentRead (in the
//	                                     BatchGetItem of the names it copies when it reads them); POST#id#TEXT
//	                                     too only when the write may change the body or its answer shows it
//	a post's exact comment counts        GetItem POST#id/POST#id#COUNT (readCommentCount), ConsistentRead
//	comment (and post) before a write    TransactGetItems of its COMMENT#/THREAD# and HELD# keys (and POST#id):
//	                                     both at one moment, as approval moves a comment from one to the other
//
// Lists ask for one item more than the page, so whether another page
// follows costs no request. Cursors are opaque: the last item's key
// attributes, encrypted and authenticated together with the list's name
// under the store's cursor key (see cursor.go), so they show nothing of
// the table and cannot be forged; one from another list, altered, or
// sealed with another key is an invalid-input error, refused before any
// request.
//
// A list read backward (last, before) is the same Query in the other
// direction, started after the before cursor's item (ExclusiveStartKey),
// its items then reversed: the same cost as a forward page. A page tells whether items
// follow or precede it on its reading side from its extra item, and on
// the other side whether it started from a cursor. A cursor positions an
// item in both directions; after goes with a forward page, before with a
// backward one.
//
// A publication period (publishedAfter inclusive, publishedBefore
// exclusive, to the millisecond) narrows the sort key range of a list of
// posts: "POST#<from>" and "POST#<to>" are bounds that no key equals, so
// BETWEEN takes them either way, and the tighter of "POST#<to>" and the
// scheduled-post bound wins. No filter expression, no extra request; a
// period that holds nothing (in the future, or empty) costs no request.
// The period is part of the list's name, so a cursor of another period
// is refused. The feed's cursor is a GSI1SK (from above for a forward
// page, from below for a backward one): the feed is read BETWEEN it and
// the other bound, one item more than the page, and the cursor's own
// item, which the inclusive bound lets in, is left out. previous and next
// read the feed the same way from the post's own key.
//
// Reads are eventually consistent, as DynamoDB's GSIs always are: a write
// shows in the lists a moment (usually well under a second) after it
// returns. Writes read with ConsistentRead, so they never act on stale data.
//
// # Slugs and redirects
//
// A post's or an author's item lists its slugs in "slugs": its current
// one first, then up to 10 it held before, newest first. Each has a
// reservation (SLUG# for posts, AUTHORSLUG# for authors: an author and a
// post may share a slug) naming the holder, "redirect" on the old ones. A
// reading by slug finds the holder either way in the same two requests and
// shows the current slug, from which a frontend redirects.
//
// Changing a slug puts the new reservation, turns the old one into a
// redirect and deletes the oldest past the bound, in the write's
// transaction. The new slug's reservation is read with the holder (in the
// same BatchGetItem): free, it is taken with attribute_not_exists; the
// holder's own redirect becomes current again; another's current slug is
// ErrSlugTaken; another's redirect is ErrSlugTaken too unless a post of
// the same author or an admin's write takes it (read from the holder with
// its slugs; a holder's author never changes), and it is taken on the
// condition that it is
// still that holder's redirect, and taken out of that holder's slugs in
// the same transaction, on the condition that they are as read (one more
// GetItem, only then). A post's writes compare its slugs as they compare
// its counts, and an author's slug change does too, so no write puts back
// a slug that was taken meanwhile. The list is never empty, since it holds
// the current slug: nothing has to remove an attribute or leave an empty
// list. Deleting a post deletes its reservations, redirects included:
// links to a deleted post lead nowhere, whichever slug they use.
//
// Static pages share the posts' namespace: a page's reservation is a
// SLUG# item naming pageId instead of postId, so a page and a post never
// hold one slug, current or old, and a frontend may route /<slug> to
// pages (or serve pages and posts from one path segment). A reservation
// naming the other kind of holder is taken whatever it is (a post never
// takes a page's old slug, nor a page a post's); a page takes another
// page's old slug as an admin's post write does (pages are written by
// admins only). A draft that takes another post's old slug writes the
// reservation with prevPostId, the post it came from: a reader who
// cannot see the draft is shown that post (whose slug is its current
// one, so the frontend redirects as for any old slug) in the same two
// requests (the reservation, then both posts in one BatchGetItem) until
// the draft is public; prevPostId stays and is read only while the
// holder is hidden.
//
// Authors made without a slug get one from their name ("ada-lovelace",
// then "-2" to "-9", then a random suffix: CreateAuthor reads the
// candidates in one BatchGetItem). A new author slug is copied into the
// author's posts and copies as a rename is (authorSlug, bumping nameVer),
// so bylines link without a read.
//
// # Rendered bodies
//
// Every write that sets a body renders it (package markdown: CommonMark
// with GitHub's tables, strikethrough, autolinks and task lists, and
// footnotes, by goldmark, sanitized by bluemonday's UGC policy opened
// exactly for the HTML the renderer writes; images only from http and
// https URLs, with their width and height; links with a host but to the
// site URL nofollow and noreferrer; fenced code with its language, and
// highlighted with classes if the store is made WithHighlight; embeds of
// a few providers as sandboxed iframes or blockquotes) and stores the
// HTML, the table
// of contents (its anchors are the headings' ids in the HTML), the word
// count, the reading time at 265 words a minute and an excerpt derived
// from the first paragraphs, shown when the post has none of its own. So
// every path that writes posts (the API, the demo blog, the benchmark's
// data set) agrees, and reads never render. A body that renders to more
// than 200 000 bytes of HTML, or passes one of package markdown's limits
// on what the parser builds (table columns and cells, nesting, markers
// and brackets in a paragraph), is refused; rendering runs under the
// request's deadline. Heading ids start with the store's prefix
// (WithHeadingIDPrefix, "h-" by default). The post, and the static page,
// records the version of its renderer (renderVersion:
// markdown.Options.Version, the code's and the options'); when the
// renderer changes, the change feed's "rerender" worker renders every
// post and page of another version again in the background, one
// transaction an item conditional on its version (rerender.go says how,
// and how a fleet of two releases agrees). renderedKinds lists what it
// covers (posts, pages): anything else rendered with package markdown
// adds its kind there. The largest body item (a body of 100 000 bytes,
// 200 000 of HTML, 100 long headings) and the largest post item (every
// other field at its limit in four-byte runes, 10 redirects) are together
// about 376 KB, each within DynamoDB's 400 KB.
//
// # Static pages and site settings
//
// A static page (pages.go) is one item, rendered as a post is (the same
// function and options, and the same renderVersion, so the background
// re-render covers both: its sweep lists the pages from GSI1 PAGES and
// PAGEDRAFTS) and in
// no copy, feed, archive or category: its writes are one transaction of
// the page (condition: its version as read), its slug reservations
// (moveSlug, as a post's), STATS' pageCount when it is published or
// unpublished, and, for a new parent, a condition check that the parent
// exists and has no parent of its own. A parent that is itself top level
// at the moment of the write cannot close a cycle (the last write of a
// cycle would find its parent with a parent), so menus are trees; a
// deleted parent leaves its pages with a parentId that names nothing,
// read as top level. Pages are listed by order (0 to 99999, five digits
// in the sort key) then id, published and drafts apart, one Query each.
//
// The site settings (site.go) are the item SITE/SITE, written whole by
// UpdateSite with attribute_not_exists for the first version and
// version = :read after. Each Store keeps the item once read: reads of
// the settings (the site query, every feed and sitemap request, the
// change feed's translation of records into paths) cost no request, but
// the first after a start or a change. ForgetSite drops the copy when the
// change feed's events hold site.updated (every server tails the log),
// and a server's own UpdateSite keeps its answer, so a change reaches
// every server within the feed's delay (about a second). Empty settings
// take the server's flags.
//
// Neither needs a migration: a table written before has no page, no site
// item (the flags' settings, version 0) and no pageCount (read as 0).
//
// # Scheduled posts
//
// A post published with a future publishedAt is scheduled. Its copies are
// written at once, but every public list bounds its sort key by
// "POST#<now>$", so the post appears when its time passes with no
// background job.
//
// The change feed sees writes only, so a scheduled post also goes live
// with a write (schedule.go). A write that publishes a post, or changes
// its publishedAt, to a time after the store's clock gives the post item
// the go-live marker goLiveAt (its publishedAt) and puts its schedule
// item SCHEDULE / <publishedAt>#<postId>; a write that moves it deletes
// the old item and puts the new one; unpublishing, deleting or dating it
// now or earlier removes both; any other write keeps the marker as it is.
// All of it is in the post's own transaction (one or two actions more, no
// request more), and every post write is conditional on the marker as
// read. The schedule item is also in GSI1 partition GOLIVE, global, by
// "<publishedAt>#<pubId>#<postId>" (the go-live index of every
// publication: schedule_index.go). GoLive, which one server of the fleet
// runs about every second, reads the due entries of the index (one Query
// of GSI1 GOLIVE, GSI1SK up to "<now>$", 100 a page, whatever the number
// of publications) and for each runs, in the post's publication, one
// TransactWriteItems
// that removes the post's marker, on the condition that it still names
// the item's time, and deletes the item. That write changes no version
// and nothing a reader sees; it is the go-live the change feed turns into
// post.published. A post rescheduled, unpublished or deleted meanwhile
// fails the condition and is left alone (a schedule item left without
// its post is deleted then), so servers may sweep at once and each
// scheduled time goes live once. A post whose time has passed is
// visible before the sweep reaches it (within about a second): lists
// read the time, not the marker. The SCHEDULE partition holds only posts
// waiting for their time and takes one write each way per scheduled
// post: no hot partition at a blog's rates. GOLIVE takes those writes of
// every publication: about 1,000 schedule changes a second, platform-wide,
// before it throttles.
//
// # Drafts
//
// A draft has no copies: it is only the post item, listed for its author
// in GSI1 under DRAFT#<authorId>. Publishing writes the copies and moves
// the post item's GSI1 entry to the feed (FEED); unpublishing reverses it.
//
// # Writes
//
// Every post write (create, edit, publish, schedule, unpublish, delete) is
// one TransactWriteItems that puts the post item, its body item when the
// body changes, its count item when its status, publishedAt or author
// does, puts or deletes its copies, slug reservations and schedule item,
// and adds to the post counts (and the counts of the months) of its
// author, its categories and the blog. Conditions guard it:
// attribute_not_exists on creates and slugs; on the post item, the
// version, the summary's comment counts and go-live marker that were read
// (the copies copy the counts); on the count item, the counts read; on
// the author and categories, the version of the names being copied. A failed condition is read from the
// cancellation reasons: a stale expected version is a ConflictError, a
// taken slug ErrSlugTaken; anything else that changed between the read and
// the transaction (a comment, a rename, another post's scheduled-post
// entry, the post itself) makes the write read again and retry, creates
// included. A transaction conflict with a concurrent writer, or a
// cancellation for throttling, is retried with backoff. Every retry is
// bounded: a write that keeps meeting concurrent writes fails with ErrBusy,
// one that DynamoDB keeps throttling with ErrUnavailable, and nothing is
// written; both mean "send it again later", never a bug. A write whose
// read shows it can no longer be done (the post was deleted or
// unpublished, the comment deleted) fails as it would have at first
// (ErrNotFound, a ValidationError). Reads a write needs are one
// BatchGetItem (or GetItem, or the Query of the post's items) with
// ConsistentRead.
//
// A write that cannot change the body (every post write but createPost,
// an edit of the body, restorePostRevision, the re-render and the
// migration: a publish, a schedule, an unpublish, an edit of the title,
// slug, categories, tags, co-authors, cover or SEO fields, featuring, a
// series, a rename's or a tag merge's rewrite, a deletion) reads the post
// item and its count item, not the body item, and writes nothing of the
// body (the post item keeps the sums of the body as read); a deletion
// deletes the body item by its key. It reads, per post write (requests,
// read units of a post of about 26 KB of Markdown on the embedded
// engine, TestPostWriteLeavingTheBodyReadsNoBody):
//
//	write                                  requests                        read units
//	edit of the title (or any write above) Query + TransactWriteItems: 2   1 (a short post's: 1)
//	the same, its answer showing the body  Query + TransactWriteItems: 2   17 (the body read with the post)
//	edit of the body                       Query + TransactWriteItems: 2   17
//	with an idempotency key                + GetItem of the record         + 1
//
// Its answer is the post without its body (Post.BodyUnread), which the
// GraphQL layer reads when asked, unless the caller asks for the body
// (AnswerWithBody, which the GraphQL layer does when the mutation's
// selection shows the post's body, HTML or table of contents): then the
// same Query reads the body item too, and the answer is the body as of
// the write. Its idempotency record leaves the unchanged body out, so a
// repeat answers the post BodyUnread, its body read as it is then.
//
// Adding a comment is one transaction: the comment and commentCount (and
// threadCount for a top-level comment) on the post's count item, guarded
// by the count item's status and publishedAt (the post is visible now),
// and for a reply its parent rewritten with replyCount and the replies it
// carries, guarded by the parent's version: a top-level comment is two
// small items. Approving, rejecting and deleting a comment write the same
// count item, never the post item or a copy. The counts the post item
// and its copies (the summaries lists show) carry follow the count item
// from the change feed. A deleted
// comment with replies stays as a tombstone (deleted, no body); replies
// answer top-level comments only.
//
// A comment needs no read before its transaction when the store has seen
// what it depends on: each Store keeps the last it read or wrote of posts'
// count items, authors, readers' profiles and
// rate items, and comments (at most 4096 of each kind and 32 MiB in all,
// hints.go). The transaction is built from them and guarded by what it
// assumed (the post's status and publishedAt, the parent's version, the rate
// item's version, the reader's profile, attribute_not_exists for what it
// assumed missing), each action asking for the item as it is when its
// condition fails (ReturnValuesOnConditionCheckFailure ALL_OLD). A stale hint costs
// a cancelled transaction, whose cancellation reasons bring the current
// items, and the next attempt is built from them; a refusal (a post gone
// or unpublished, a deleted parent, a reader over the limit or repeating
// a comment) is always confirmed by a consistent read first. So adding a
// comment is one request on a post the server has read or written, two
// on one it has not, and a comment with an idempotency key reads its
// record only when the transaction meets it.
//
// The most actions a post write can have: the post; the new slug, the old
// one as a redirect, the oldest redirect dropped and another post's slugs
// (4); the author copy put and deleted (2); 10 category copies put and 10
// deleted; the author, 20 categories and STATS (22); the idempotency
// record; the count item: 51, of DynamoDB's 100; an edit's body item,
// its revision and the one it pushes out add 3 (54), a deletion's series
// and body item 2. One mutation changes at most part of it:
// an edit moving a post from 10 categories to 10 others while taking
// another's redirect is 48, a schedule that moves a post to another month
// 27, deleting a post with 10 redirects and 10 categories 39
// (TestWorstCasePostWritesFitOneTransaction, TestPostActionsBound). Co-authors
// and tags add copies and counters: see Co-authors and tags for those
// figures and the bound that keeps every post write within 100 actions.
//
// # Comments: who writes them, moderation, bounded threads
//
// A comment records who wrote it in exactly one of authorId (an author:
// AUTHOR#<authorId>) and readerId (a reader: READER#<sub>, the subject of
// their token). Author ids and reader subjects are separate namespaces;
// which attribute is set says which one an id belongs to. A reader item
// holds the display name and picture of the reader's token's name and
// picture claims; a comment's transaction writes it when it is missing or
// the claims changed, and nothing else does. Lists show commenters by
// reading AUTHOR# and READER# keys in one BatchGetItem, so a rename shows
// everywhere at once.
//
// Every comment item has a version, increased by every write of it, and
// every write of a comment item is a whole-item Put guarded by the version
// read (items written before versions existed have none, read as 0).
//
// A reader's comment on a blog that holds them is written as pending under
// HELD#, outside the COMMENT# and THREAD# ranges, so no public list reads
// it and no count includes it; its GSI1 entry puts it in the queue of the
// post's author, and a copy under MODQ puts it in the admins' queue, both
// in the same transaction. Approving is one transaction: delete the held
// item and its queue entry, put the comment at its COMMENT# or THREAD#
// key, count it on the post and its copies, and for a reply rewrite the
// parent. Rejecting rewrites the held item as REJECTED without a GSI1
// entry and deletes the queue entry; DynamoDB's TTL removes it 30 days
// later (expiresAt). A comment's key follows from its id in both states,
// so a lookup by id reads both keys in one BatchGetItem. The MODQ
// partition takes every pending comment of the blog: fine for moderation
// traffic, which the rate limit bounds per reader.
//
// A top-level comment carries copies of its first 10 published replies
// (replies), in key order, so a page of comments brings the first page of
// each thread with it and a thread's first page never needs a read;
// Comment.replyConnection pages through the rest, one Query a page. A
// reply's writes rewrite its parent: adding or approving one inserts its
// copy in place (an approved reply keeps its time and may sort before
// newer ones), editing one edits its copy, deleting one drops it and, when
// the thread is longer, copies the next reply (one more Query, and a check
// that it is unchanged). Every write of a reply is guarded by the
// parent's version, every copied reply by its own. A top-level comment
// written before comments carried replies (version 0) gets them from a
// Query of its thread at its first write; until then its first page is
// read with a Query.
//
// A reader's rate item lists their comments of the last minute as
// "<createdAt>#<hash of post, parent and text>". A comment's transaction
// puts it back with the new entry, guarded by its version, so two
// servers on one table count together and a refused comment (rate limit
// reached, or the same hash within the minute) writes nothing. It expires
// (TTL) a minute after the last comment; expiry is not needed for
// correctness, entries are read by their time. Authors and admins have
// none.
//
// Deleting a post removes its comments, held ones and their queue entries
// included, after the transaction, in batches: they can outnumber a
// transaction's 100 actions, and no reader can reach them once the post
// is gone. No comment can be added meanwhile (its transaction checks the
// post). The removal goes on when the client goes away, retries a
// conflict with a comment's transaction under way, and when DynamoDB
// refuses it to the end the deletion fails with ErrBusy or
// ErrUnavailable: the same deletion sent again with its idempotency key
// replays the result and removes the rest.
//
// # Renames
//
// Renaming an author or a category, or giving an author a new slug, bumps
// its nameVer in one write, then rewrites the names (and the author's slug)
// in every post of the author (published and drafts) or every published
// post of the category, four posts at a time: one transaction per post
// covering the post and all its copies, and nothing else. It is guarded by
// the post's version and by the versions of the names the post carries,
// which may only grow (authorVer and each catVer at most the nameVer read),
// so a slow rename never overwrites a newer one. The author and category
// items are in none of these transactions, so a rename of a category of any
// size never contends with the writers of new posts in it: only the nameVer
// bump does, once. A post written meanwhile checks the author's and
// categories' current nameVer in its own transaction and re-reads the
// names. A rename takes about as long as writing its posts one by one, four
// at a time (500 posts: 5 to 8 s on DynamoDB Local); one cut short by the
// request's deadline or by ErrBusy is finished by the same call sent again.
// The rewrites of the posts mean no event (their copied names are not an
// edit), and the rename's own write is announced before them, so an answer
// read in between shows the old names though that event has gone by: once
// every post is rewritten, the call sets the item's renamedVer to the
// nameVer read before them (one GetItem, one conditional UpdateItem, unless
// a later rename's call got there first), which the change feed announces
// as author.updated, category.updated or tag.updated again, with the same
// cache tags, which every answer showing a copied name carries. One event
// however many posts; a call cut short announces it when the call sent
// again finishes.
// Drafts keep the category names they were last saved with (they are in no
// category's list): the GraphQL layer reads a draft's categories instead of
// trusting the copied names.
//
// # Idempotency
//
// A write given an idempotency key records, in its own transaction, an
// item IDEMPOTENCY#<op>#<key> with the hash of the input and the result,
// on the condition that there is none yet. A repeat with the same input
// returns the recorded result; with other input ErrIdempotencyMismatch. A
// repeat that races the first call (both found no record) gets the first
// one's result too: its transaction fails on the record, or its read
// already shows the first call's effect and it refuses (the post gone,
// the version moved on), and either way it reads the record again. Every
// transaction, with an idempotency key or without, gets a
// ClientRequestToken of its own, so the SDK's retry of a request whose
// answer was lost takes effect once, and a transaction rebuilt after a
// stale read or refused as a whole never meets the token of another
// (IdempotentParameterMismatch). A post's result is recorded without its
// rendered body and table of contents, which a replay renders again from
// the recorded body: rendering is deterministic, and the record of the
// largest post stays near 220 KB. Records expire after 24 hours (TTL
// attribute expiresAt). The store takes keys as they come; the GraphQL
// layer scopes a client's key to its user (a hash of the token's subject
// and the key), so one user's key never replays another's result.
//
// # Change feed
//
// EventsOf turns one DynamoDB Streams record of the table
// (NEW_AND_OLD_IMAGES) into the domain events it means, a pure function of
// the record, so it runs in the server's dispatcher or in a Lambda on the
// stream alike. It reads post, author, category, tag, comment, series, static page, site, page index and staff membership items only,
// and of the global items the publications' directory items:
// copies, counters, slug reservations, host claims, queue entries, readers, rates,
// idempotency records, server keys, schedule items and the layout item
// mean nothing. A post is a draft, scheduled (published, with the go-live
// marker) or published (without it), compared before and after the
// write; the record's time plays no part:
//
//	post.published         draft, scheduled or new → published; the go-live write (the marker
//	                       removed, nothing else) is the publication of a scheduled post
//	post.published.edited  published → published, a change readers see: title, slug, excerpt,
//	                       body, cover, SEO, categories, publishedAt, featured, series, or the
//	                       HTML of a body rendered again by another renderer (not counts,
//	                       versions, copied names: a rename is author.updated or category.updated)
//	post.unpublished       published → draft, or → scheduled (with post.scheduled)
//	post.scheduled         draft, new or published → scheduled
//	post.rescheduled       scheduled → scheduled at another time
//	post.unscheduled       scheduled → draft
//	post.deleted           published or scheduled → removed (a draft's deletion: none)
//	post.counts.updated    a published post's commentCount or threadCount changed on its item
//	                       (the counts worker, after the copies: doccounts.go), tag counts:<id>
//	author.updated         an author created, removed, or its name, slug, bio, picture, website,
//	                       location or accounts changed; again once a rename has reached every
//	                       post (renamedVer)
//	category.updated       a category created, removed, or its name or description changed;
//	                       again once a rename has reached every post
//	tag.updated            a tag made, renamed, or merged into another (then naming both);
//	                       again once a rename or merge has reached every post
//	comment.added          a published comment's item written (COMMENT#, THREAD#)
//	comment.approved       the same, with approvedAt, which only ApproveComment sets
//	comment.edited         a published comment's text changed
//	comment.deleted        a published comment removed or made a tombstone (also when its
//	                       post's deletion removes it, or an edit holds it again)
//	comment.pending        a held item written PENDING (a new comment, or an edit held again)
//	comment.rejected       a held item PENDING → REJECTED
//	page.published         a static page: draft or new → published
//	page.published.edited  published → published, a change readers see (slug, title, body, SEO,
//	                       order, parent, or the HTML of a body rendered again by another
//	                       renderer; not the version alone)
//	page.unpublished       published → draft
//	page.deleted           published → removed (a draft page's writes: none)
//	site.updated           the site settings written
//	post.pages.updated     a chunk of a list's page index whose count or starts the pages worker
//	                       changed (numbered pages): the list's category, tag or author, cache
//	                       tag feed (the feed and its months), category:<slug>, tag:<slug> or
//	                       author:<id>
//	series.updated         a series created, changed (title, description, cover, its posts'
//	                       order or membership) or deleted
//	publication.updated    a publication's directory item created, removed, or its slug, title,
//	                       hosts or status changed (publicationevents.go): hosts after the write,
//	                       previousHosts those it left, slug, previousSlugs; every server drops
//	                       what it holds of those hosts (package routing); no webhook gets it
//	publication.member.added, .role.changed, .removed
//	                       a staff membership (STAFF#<account>) written: publicationId,
//	                       accountId, role and previousRole, never its email; every server
//	                       drops the role it holds of the account (ForgetStaff)
//
// A held item's removal (approval, deletion, TTL) means nothing: the record
// cannot tell which. A marker added without a new version is Migrate
// marking a post an earlier version scheduled, and means nothing. A
// scheduled post edited or unpublished after its time but before the sweep
// reached it is still scheduled to the feed: its edit is no event, its
// unpublishing post.unscheduled (which names the same pages and tags).
// A post's co-authors and tags are part of what readers see: a change of
// either is post.published.edited, and every post event names the pages
// and cache tags (author:<id>, tag:<slug>) of every author and tag the
// post had and has, with their ids in coAuthors, previousCoAuthors, tags
// and previousTags.
// An event's id is "evt_" and a hash of the record's eventID, sequence
// number and the event's type, so a record read again gives the same ids.
// Its data carries the ids, slugs (with the previous ones), categories,
// the frontend paths (Paths, DefaultPaths: /, /posts/<slug>,
// /authors/<slug>, /categories/<slug>, /archive/<yyyy>/<mm>; a post's
// path may hold its date, and the server takes them from its settings,
// which its feeds link with too) and the cache
// tags of every response that showed what changed, before and after:
//
//	post:<id>          a post's page and every list showing its summary
//	author:<id>        an author's page and every post or summary with their name
//	category:<slug>    a category's page and every post or summary with its name
//	tag:<slug>         a tag's page and every post or summary with its name
//	feed               the whole-blog feed and the home page
//	archive:<yyyy-mm>  a month's archive
//	comments:<postId>  a post's comments
//	counts:<postId>    the lists that show a post's comment count as its summaries hold it
//	page:<id>          a static page and the list of pages
//	site               everything that shows the site settings (feeds, the site query)
//	featured           the featured posts' list (a post featured before or after the write)
//	series:<slug>      a series' page (and a post's place in it), with the path /series/<slug>
//	search             searches and related posts (post, author and category events)
//
// Every event that names a tag of a kind names its kind's section tag too
// (SectionTag): feed for post:<id> and archive:<yyyy-mm>, and authors,
// categories, tags, pages, series, comments and counts for the others.
// The lists of all authors, categories, tags, pages and series carry
// their section, and an answer with too many tags for a header carries
// sections instead of them.
//
// Comment events carry no paths: a comment's item does not know its
// post's slug; comments:<postId> finds the pages.
//
// # Event log and leases
//
// The server's dispatcher (package changefeed) reads the stream's shards
// and logs their events in the table, so every server can read them with
// one cheap Query (EventsAfter) from its last position: the stream
// allows two readers per shard, the log any number.
//
// The leases, the heartbeats and the event log are the change feed's own
// items: package feedstore (storage/feedstore) keeps them, built on the
// table primitives and knowing nothing of the blog's items, and
// Store.Feed reaches it. It logs each event as the JSON the domain gives
// it; AppendEvents and EventsAfter here encode and decode the events
// EventsOf makes (feedlog.go).
//
// How leases are held and taken over, and how AppendEvents keeps the
// log's positions dense and each record's events logged exactly once,
// is package feedstore's documentation (storage/feedstore/doc.go).
package storage

package storage

// The rest of the table's design, continued from doc.go (the package
// comment): how a post is kept in three items and the feed in one
// partition, webhooks, layout versions and their migration, co-authors
// and tags, featured posts, series and revisions, numbered pages.
//
// # Posts in three items
//
// DynamoDB bills a write by the size of the whole item it writes (an
// update too, and twice in a transaction), and a read by the size of what
// it returns. A post is kept in three items of its partition, so that
// each write pays for what it changes:
//
//	item          SK                attributes
//	post item     POST#<id>         the summary lists show (title, slug, excerpt, cover, names, words, minutes,
//	                                autoExcerpt, renderVersion, bodySum, htmlSum, the summary's commentCount), seo, slugs...
//	count item    POST#<id>#COUNT   commentCount, threadCount (exact), status, publishedAt, authorId
//	body item     POST#<id>#TEXT    body (Markdown), bodyHtml, toc, renderVersion
//
// The body item is written only when the body (or its rendering) changes:
// createPost, an edit of the body, the background re-render, the
// migration. A publish, an unpublish, a schedule or an edit of the title
// writes the post item, its copies and its slugs, each a small summary
// (about 1 KB: 1 write unit, 2 in a transaction), and nothing of the
// body; a body edit writes the body item once. Such a write does not read
// the body item either (the Query up to POST#<id>#COUNT, as
// GetPostWithoutBody's), unless its answer shows the body: see Writes in
// doc.go. bodySum and htmlSum, short
// sums of the body and its HTML, make a body edit or a re-render change
// the post item too, so the change feed sees it as the edit it is.
//
// The count item holds the exact comment counts and what a comment's
// transaction checks: that the post is published and visible now
// (status = PUBLISHED and publishedAt <= now) and whose moderation queue
// a held comment joins (authorId). Post writes that change those
// (create, publish, schedule, unpublish, delete) write it in their
// transaction, whole, on the condition that its counts are as read. So
// adding a top-level comment is one TransactWriteItems of two small
// items, the comment and the count item (ADD commentCount, threadCount),
// about 4 write units; approvals, rejections and deletions the same. A
// comment never writes the post item or a copy: the comment counts they
// carry (what lists show) follow the count item from the change feed,
// coalesced, a moment later; the post page's own count (Post.CommentCount
// of GetPost) is the count item's, read with the post. readCommentCount
// reads it alone.
//
// The three sort keys follow one another in the partition (nothing else
// of it starts with POST#), so the post with its counts and body is one
// Query (PK = POST#<id>, SK BETWEEN "POST#<id>" AND "POST#<id>#TEXT"),
// billed by the three items' total size, and many posts one BatchGetItem
// of their three keys each. A post item read without its body item is a
// summary (Post.Summary): the feed, previous and next, drafts; the GraphQL
// layer reads the body items of a page in one batch when it selects the
// body, its HTML or its table of contents, as it does for copies. A
// post's page that shows none of the three reads the post item and the
// count item alone (GetPostWithoutBody: the Query up to POST#<id>#COUNT,
// Post.BodyUnread), the page of a long post a few read units less.
//
// # The feed
//
// The whole-blog feed is the post items in GSI1, one partition FEED, by
// publication time: a page, previous or next, a month's archive is one
// Query, and totalCount alone reads STATS. With the body in its own item
// the post item is a summary (about 1 KB), so a 20-card feed page reads
// about what a category page does. Before layout 4 the feed was spread
// over four partitions by a hash of the post id, so that no partition
// took every write; at a blog's rate that buys nothing: a partition takes
// 1,000 write units a second, and with comments counted on the count
// item the post item changes only on a post write (and on the counts
// worker's coalesced update, at most one a second a post), far below it,
// while four shards cost four Queries, each reading a page, for every
// page (measured with extensions.cost on the embedded engine: a 20-card
// page of the demo blog was 4 requests and 47.5 read units with the
// bodies on the post items; of the tests' blog, whose bodies are short,
// 4 requests and 3 read units in four shards, and now 1 request and 2
// read units, as its category page's 2: TestFeedCostsWhatACategoryPageDoes). A feed
// read far beyond a partition's 3,000 read units a second is the answer
// cache's.
// feedRange still merges partitions (keys.Space.FeedPartitions) and reads on past
// DynamoDB's 1 MB page: a list holds `first` items whenever that many
// follow and never skips one; every other list reads on the same way
// (queryPage).
//
// # Webhooks
//
// Every webhook is an item of the partition WEBHOOKS, so the list is one
// Query, and WEBHOOKS/COUNT counts them in the transactions that create
// (condition: count < 100) and delete them: a 101st is refused without a
// race. A webhook's secret is kept in its item as package webhooks seals
// it (AES-GCM under a key derived from the server key SECRET#webhooks), so
// the item alone, or a stream record of it, does not show it; it is never
// answered after createWebhook and rotateWebhookSecret. A rotation keeps
// the previous one (previousSecret) until previousUntil, and both sign
// meanwhile. A webhook keeps the event log's head when it was made
// (logAfter) and gets the events logged after it: event times are too
// coarse to tell (DynamoDB Local rounds a record's time down to the
// minute). A webhook without it, made by an earlier version, gets the
// events whose time is not before its creation's second.
//
// The outbox has one item per webhook and event (WEBHOOK#<id>,
// OUTBOX#<eventId>), put with attribute_not_exists, so handling an event
// again delivers nothing twice. It holds the body, the same bytes on every
// attempt, and the attempt count. While pending it is in GSI1 partition
// OUTBOX under the time of its next attempt: what is due is one Query
// (GSI1SK < "<now>$"). An attempt first claims it (a conditional update
// that moves the next attempt past the attempt's timeout, conditioned on
// the attempt count and the due time it was read with), so one attempt is
// made however often it is seen due, and one that never finishes (a crash)
// is due again once the claim lapses; its outcome is written with a
// history item in one transaction, conditioned on the attempt count.
// Delivered or given up, it leaves the index and expires after 7 days
// (DeliveryRetention), far past the event log's retention, so the same
// event cannot come back to find it gone. Each attempt is a history item
// (DELIVERY#<at>#<eventId>#<attempt>, expiring after 7 days), read newest
// first. Deleting a webhook deletes its partition after its item. Check
// reports outbox and history items whose webhook is gone, a pending one
// out of the index or due more than StuckAfter (1 h) ago, and a count that
// is off.
//
//
// # Layout versions and migration
//
// The item LAYOUT/LAYOUT (type "layout") holds the version of the layout
// the table is in, CurrentLayout (5), and when it was migrated to it. A
// table without it is in layout 1, the layout of the version before layouts
// had numbers, or is new. Layouts 1 and 2 have scheduled posts without
// their go-live marker and schedule item. Layout 1 has authors without slug, slugs and
// AUTHORSLUG# reservations; posts and author/category copies without
// authorSlug, html, toc, words, minutes, the derived excerpt and slugs;
// counters without month attributes, with a "-" entry in every scheduled
// map; empty strings for a cleared bio, avatarUrl or description; comments
// without versions, and top-level comments that carry no replies. Layout
// 3 has posts that keep their body, bodyHtml, toc and exact comment
// counts on the post item, and the feed in four GSI1 partitions
// FEED#0..FEED#3. Layouts 1 to 4 keep every item without a publication's
// prefix: layout 5 moves them under the default publication's (see
// Publications in doc.go).
//
// Store.Migrate brings a table of layout 1 to 4 to layout 5, one step
// a layout, and the server runs it at start before serving
// (-migrate=auto; docs/operations.md). Each step is a file of package
// internal/migrations (v2.go, v3.go, v4.go, v5.go), frozen when it shipped: it
// uses the table primitives and its own copies of the item shapes and
// keys of its layout, never this package's writes. Once done, a
// start costs one GetItem of the layout item. Otherwise, from layout 1,
// it lists authors and categories by Queries of GSI1 and posts by Queries
// of each author's partition (the server's IAM policy has no Scan) and,
// for each:
//
//   - author without a slug: one TransactWriteItems gives it the slug
//     CreateAuthor would make from its name ("ada-lovelace", or
//     "ada-lovelace-2" when taken) with its reservation, as an edit of the
//     author (version and nameVer grow), conditional on its version;
//     authors go one after another, oldest first, so of two of one name
//     the older gets the slug without a number;
//   - post without slugs: one TransactWriteItems writes it again with its
//     copies, as layout 2 wrote a post, with its slugs, its author's
//     slug, its rendered body, toc, word count and reading time, and,
//     when published, adds it to its month on its author, its categories
//     and STATS; conditional on the version, names, GSI1 entry and body
//     read. A post that a write of this version moved meanwhile (it has
//     slugs) gets its author's slug as a rename gives it (refreshNames).
//     A post write of layout 2 counts a post by month only once it has
//     slugs, so months stay exact whatever is written meanwhile. A body
//     that renders to more than MaxHTMLBytes is migrated without HTML and
//     logged; every later write of the post renders it;
//   - comment without a version: version 1, and a top-level comment with
//     replies the copies of its first MaxReplyPage replies, in one
//     TransactWriteItems conditional on none of them having changed;
//   - counter (author, category, STATS): one UpdateItem removes the "-"
//     entry and the empty strings, conditional on them being as read.
//
// From layout 1 or 2 it then lists the posts scheduled after now (a Query
// of each author's partition from "POST#<now>$") and gives each that has
// no go-live marker its marker and schedule item, in one TransactWriteItems
// conditional on the post's version, status, publishedAt and marker as
// read, without a new version. From layout 1, 2 or 3 it then lists every
// post (Queries of GSI1: FEED#0..FEED#3 and FEED, and each author's
// DRAFT# partition) and moves each that is not in layout 4 yet
// (SplitPost, internal/migrations/v4.go) in one TransactWriteItems: the body item put
// from the post item's body, bodyHtml, toc and renderVersion, the count
// item from its commentCount, threadCount, status, publishedAt and
// authorId (both attribute_not_exists), and the post item updated (body,
// bodyHtml and toc removed, bodySum and htmlSum set, GSI1PK FEED when
// published), on the condition that its version and counts are as read;
// no version and no updatedAt change, so the change feed sees no edit.
// A comment written meanwhile on a post not moved yet (its count item
// missing) moves that post first and is written then. Then it records
// layout 4. From layout 1 its cost is about four reads and two
// transactions per post (layout 2's write, then layout 4's), one
// transaction per comment thread, and one update per author and category; from layout 2, a Query per author and
// a read and a transaction per scheduled post; from layout 3, a Query
// of each feed partition and of each author's drafts, and a Query and a
// transaction per post. Readers of this version read a post of layout 3
// meanwhile as it is: its own item holds what its body and count items
// would.
// Every write is conditional on what was read, and one that meets a
// change made meanwhile reads again, so migrations may run on several
// servers at once and beside live writes of layout 3; a run that stops
// half-way leaves the layout item unwritten and the next run finds what
// was done done. Servers of the previous version must all be stopped
// first: they write the old layout (the body on the post item, comments
// counted on it and on the copies), which this version does not read
// once a post has its count item. A cursor of the feed made by a server
// of layout 3 holds a GSI1SK only and stays valid: the feed is read from
// it as before.
//
//
// # Co-authors and tags
//
// A post has an ordered list of authors, at most MaxAuthors (10): its
// primary author in authorId, authorName, authorSlug and authorVer as
// before, and the others in coAuthors (id, name, slug each) with the
// nameVer of each in coAuthorVer. A post without them has its primary
// author alone, which is what every post written before co-authors is:
// no migration. Every author of a published post has an author→post copy
// in their own partition, so an author's page (and their feed) lists the
// posts they co-wrote with one Query as before, and counts them
// (postCount, scheduled entries, months) in the post's transactions; a
// post write guards every author's nameVer as it guards the primary's.
// Every copy carries every author's name and slug, so bylines need no
// read. Renaming an author, or giving them a new slug, rewrites the posts
// of their partition, which holds the posts they co-wrote: each rewrite
// covers the post and all its copies, in every co-author's partition and
// every category's and tag's. Drafts are in their primary author's drafts
// only: a co-author's rename reaches a draft at its next write, and the
// GraphQL layer reads the authors of a draft that has co-authors. Any
// author of a post may read its drafts and edit it; only its primary
// author and admins change its co-authors (the primary author never
// changes). A post write is given its writer (Actor, empty for an admin)
// and checks it against the authors it reads, under the version condition
// of its transaction, so a co-author removed meanwhile cannot write
// (ErrNotPostAuthor). Servers of a version before co-authors and tags
// must all be stopped before either is used: they write a post without
// them, and would leave its other authors' and tags' copies behind.
//
// Tags are free-form: a post has at most MaxTags (10), given by name; the
// slug is made from the name (markdown.Slugify), two names of one slug
// are one tag, and the name a tag was made with stands until a rename.
// Their pages follow the categories' design, for the same reasons: a
// post-in-tag copy per tag of a published post, TAG#<slug> in GSI1 by
// publication time, so a tag's page is one Query in either direction and
// its totalCount the tag item's postCount (scheduled entries subtracted,
// as for categories). An index on the post items instead would need a
// GSI per tag position or a multi-valued key, which DynamoDB does not
// have. A tag nobody has made is made by the post write that names it
// first, in its transaction (an UpdateItem of the tag conditional on
// attribute_not_exists, which sets its name and counts; a concurrent
// maker fails it and the write reads again). Tags are never deleted.
// Renaming one bumps its nameVer and rewrites its published posts as a
// category rename does. Merging A into B marks A (mergedInto B, out of
// GSI1, nameVer bumped, conditional on B not being merged itself) and then
// writes each of A's posts again as an edit that changes nothing
// (movePost), which moves it: every post write reads the tags it names,
// follows mergedInto to the tag that holds the posts now (one more
// BatchGetItem a hop, only then), and writes the post's copies and counts
// under that one; a post written meanwhile moves itself the same way,
// drafts included, so merges need no list of drafts, and a draft shows
// the merged tag until its next write. A's slug keeps leading to B
// (GetTag).
//
// The largest post write: with A authors, C categories and T tags (each
// at most 10), a post write is the post (1), its copies (A+C+T puts), its
// counters (A+C+T, and STATS when a count changes), the idempotency
// record (1), its schedule item (up to 2), its slug changes (up to 4),
// and the deletions of the copies it leaves and the updates of the
// counters it leaves. Publishing a post of 10 authors, 10 categories and
// 10 tags is 64 actions (the count item's status one more); scheduling it
// to another month 75 (the author copies' keys hold the time: 10 put, 10
// deleted); replacing its 10 tags while taking another post's redirect
// 85; creating it 35 (its body and count items); deleting it 68 (both
// deleted too); renaming one of its authors 31 (the post and its 30
// copies). In bytes, with the largest body (the post's items about
// 376 KB together), names at their limits in
// four-byte runes and the idempotency record, the largest request is
// 1.24 MB (every item it puts whole), and the items it writes, the
// updated counters counted whole too (an author's at most about 10 KB),
// about 1.4 MB: a third of DynamoDB's 4 MB.
// One change can pass 100 actions only by replacing most of two of the
// sets at once (all 10 tags and all 10 categories: 106); such a write is
// refused before any request as invalid input (fitsOneTransaction),
// writing nothing, and the same changes made in two updates pass
// (TestWorstCaseCoAuthorsTagsCategoriesFitOneTransaction, on both
// backends).
//
// # Featured posts
//
// A post's "featured" flag gives it, while it is published, one more
// copy: POST#<id> / FEATURED, in GSI1 partition FEATURED under the sort
// key of its category copies, so the featured list is one Query (newest
// first, either way, bounded by "POST#<now>$" like every public list, so
// a scheduled featured post shows from its time on). The copy is written
// by the code that writes the category copies (postActions) and named by
// copyKeys, so every path that rewrites a post's copies (edits, renames
// of its author or categories, publishing, unpublishing, scheduling,
// deleting, comment counts) keeps it exact without code of its own, and
// the invariant checker compares it with the post as it does the others.
// A sparse index over the post items (GSI1 is taken by the feed)
// would need a second GSI; a copy costs one write more on the few
// featured posts only. Its partition holds the featured posts alone, a
// handful on a blog; their count (totalCount) is one Query with Select
// COUNT.
//
// # Series
//
// A series item holds the order itself: "posts", the ids of its posts,
// at most MaxSeriesPosts (1,000 ids, about 40 KB). So a reorder is one
// conditional Put of one item (on its version), positions are exact under
// any number of writers (each retried on a stale version, or a CONFLICT
// with expectedVersion), and a page of a series is the series item and
// one BatchGetItem of the page's ids (with up to 5 more, so a few drafts
// cost no second read; readers are shown public posts only, a series'
// owner and admins every post). Per-post items ordered by a position key
// would need every item after a moved post rewritten, past a
// transaction's 100 actions. A post names its series in its own item
// ("series"), so it is in at most one: adding or removing a post is a post
// write (a new version, its copies rewritten) with the series item's Put
// in the same transaction, each guarded by its version; deleting a post
// takes it out of its series in the deletion's transaction (one more
// GetItem, one more action). A 1,001st post is a ValidationError before
// anything is written. Deleting a series takes its posts out one by one
// (a transaction each, as removal does), then deletes the series item on
// its version; one cut short is finished by the same call again.
//
// # Revisions
//
// An edit (UpdatePost, and RestorePostRevision, which is one) that changes
// a post's title, body, excerpt, cover or SEO fields puts a revision item
// POST#<id> / REV#<n> with what they were, who edited (editorId), when and
// which fields changed, in the edit's own transaction: one action more,
// and, once the post has more than MaxRevisions (50), one more that
// deletes REV#<n-50>. n is the post item's "revisions" count, which the
// edit raises on the version-guarded post, so numbers are dense and the
// bound exact; the post item grows by that one number only. A revision
// keeps the Markdown, not its HTML (a restore renders it again), and only
// when the edit changed the body: one that did not is marked
// bodyless: true and holds no body, so a title edit writes a small
// revision (revisions written before the mark hold their body and have
// none). The body before edit n is the body of the oldest revision
// k >= n that holds one (the body before edit k, which no edit between
// changed), else the post's current body item. It is resolved only when
// asked (Post.revisions { body }, RestorePostRevision): the page's own
// revisions first; for bodyless ones above the page's highest revision
// that holds a body, one Query ascending from the revision after the
// page, POST#<id> / REV#<n+1> up, in pages of 4, 8, 16 ... items, that
// stops at the first revision holding a body (none when the page holds
// the post's last revision, as the post read says), plus one GetItem of
// the body item POST#<id> / POST#<id>#TEXT only when none does. Deleting the
// oldest revision past MaxRevisions never breaks this, as it looks only
// at newer ones. A body edit's revision holds at most
// about 110 KB, so the largest edit (a 376 KB post item, its revision,
// its copies and a 221 KB idempotency record) stays far below 4 MB and
// every item below 400 KB. Revisions are in no copy and no public answer
// (Post.revisions answers the post's author and admins only), and a
// post's deletion removes them with its comments.
//
// # Numbered pages
//
// The feed, a month of it, a category's, a tag's and an author's posts
// (their author→post copies in AUTHOR#<id>, co-written posts included,
// as Author.posts lists them) can be read by page number too
// (numbered.go), numbered from the oldest post: page 1 holds the
// oldest, so publishing a post changes only the last page (or adds
// one), and the pages before it keep their posts and their URLs. A
// list's page index is its count and the GSI1SK of every 10th visible
// post (PageStep), oldest first, in chunk items of 80 (under one read
// unit each); a page of a size that is a multiple of 10 starts at one of
// them. A page is one BatchGetItem of chunk 0 and the chunk holding its
// start, and one Query of its posts from that start: two requests and a
// bounded read whatever its number, where skipping (n-1)*z items of a
// GSI1 that projects ALL would read them all. A month's list
// (FEED@<yyyy-mm>) has an index of its own over the feed's range of the
// month, so its pages change only with that month's posts. A category's
// or an author's page read with the category or author puts its item in
// the same BatchGetItem. A series needs no index: its order is the list
// of ids in its own item (at most 1,000), so page n is one BatchGetItem
// of the post items at its places, drafts' places counted.
//
// The index follows its list through the change feed: the "pages"
// worker (pagesync.go) reads post events and rebuilds the index of every
// list they name (the feed and the months of the post's dates, the
// post's categories, tags and authors, before and after), at most once a
// second a list, from the list itself: an UpdateItem that claims the
// index (below), one Query
// of the chunks, then one Query of the visible posts' GSI1SK from the
// last start before the earliest publication time its events changed (a
// request per 1 MB; a post published now reads at most 10 keys, a
// deletion the keys after it), and a PutItem of each chunk that differs
// (a DeleteItem of each past the end). GSI1 follows the table a moment
// after the stream does, so the rebuild writes only when the list it
// read shows every post's last write its events name (the post's key
// in the lists it is in, none of its keys in those it left), and tries
// again a second later otherwise (ten times, then it takes the list as
// it is). The worker runs on one server at a time, but a rebuild may
// overlap another (a worker that lost its lease mid-rebuild, a repair's
// SyncAllPages): so a rebuild first sets a fence of its own on chunk 0
// (unconditionally: the last to begin wins, and reads after everything
// written before), and then puts chunk 0 on the condition that it still
// holds its fence, and every other chunk, or deletes one past the end,
// in a transaction with that check. A rebuild that read the list
// earlier can then never land over one that read it later, whatever the
// servers' clocks; the one that lost stops and is rebuilt again (it may
// have left half its changes). A chunk's write that changes its count or
// starts is the event post.pages.updated with the list's cache tag
// (a claim alone is none), which purges the numbered pages read before
// it. Until the worker
// has run, a page is read with the index it had: a deletion or a
// publication with an earlier date shifts the posts after it by one, for
// that moment; the checker compares each index with its list
// ("page indexes").

// # Readers' accounts, sign-in and the mail outbox
//
// Accounts and sessions are the platform's, not a publication's: a reader
// signs in once. An account is its item and the reservation of its
// address (ACCOUNTEMAIL#<email>, put with attribute_not_exists in the
// transaction that makes the account, so one address has one account).
// A sign-in request is keyed by the SHA-256 of its link's token, which
// only the email holds; its code is kept as a hash salted with the
// token's, found through GSI1 by the address. Completing it deletes it
// with attribute_exists and expiresAt > now in the transaction that puts
// the session, so a link or code makes one session. The rate items keep
// the sends of the last hour, written under their version in the
// request's transaction (signin.go). A session keeps only hashes of its
// refresh tokens (sessions.go). The outbox (mail.go) is one partition,
// MAILBOX, read newest first by admins, and its queue GSI1 partition
// MAILQ, with the sign-in emails in a lane of their own, MAILQ#URGENT,
// which no newsletter delays; emails are few (sign-in), and a publication's own mail will
// want partitions of its own.
//
// # Server keys
//
// Keys the servers sign with (tokens, cursors) can live in the table:
// Secret makes a random one the first time it is asked for, with
// attribute_not_exists, so every server on the table, and a server after a
// restart, uses the same key without any configuration. The server keeps
// SECRET#cursor (the cursor key, unless one is configured), SECRET#preview
// (the key of preview tokens, see the GraphQL layer's createPreviewLink: a
// token seals one post's id and its expiry and is stored nowhere),
// SECRET#reader-session (the reader key that signs readers' session
// tokens, unless one is configured; in the embedded mode it signs the
// development reader's token too) and, in the embedded mode without a
// configured token secret, SECRET#dev-jwt (the key of development staff
// tokens).
//
// # Publications
//
// The table holds publications, each a blog; a deployment with one is a
// single blog. Every item of a publication is under its prefix (the table
// above); its key space is a keys.Space, built from the publication's id,
// whose methods are the key builders (ks.Post(id), ks.CategoryPartition(slug)…),
// and a Store is the store of one publication: New takes its id
// (WithPublication), DefaultPublication ("default") without one. A
// publication id is not empty and holds no "#".
//
// The global items, outside every publication, are few (keys.Global):
//
//	LAYOUT               the table's layout version, and the layout 5 migration's checkpoint
//	PUBLICATION#<id>     the publications' directory (id, slug)
//	SECRET#<name>        the server's keys (cursors, tokens): one set for the fleet
//	PERSISTED#<hash>     automatic persisted queries: addressed by the query's hash, the same for every publication
//	READER#<sub>         readers: a platform account signs in once for every publication
//	LEASES, EVENTLOG     the change feed's leases, heartbeats and event log: one stream a table
//	GOLIVE               (GSI1 only) the go-live index: every publication's schedule items, by time (schedule_index.go)
//	ACCOUNT#, ACCOUNTEMAIL#, SIGNIN#, SIGNINCODE#, SIGNINRATE#
//	                     readers' platform accounts, sessions and sign-in requests (signin.go)
//	MAILBOX, MAILQ       the mail outbox and its queue (sign-in emails; a publication's own mail will want its own partitions)
//
// Everything else is a publication's: posts, authors, categories, tags,
// series, pages, comments and their queues, slugs, the site settings,
// STATS, the renderer (the version its posts' HTML was made with),
// idempotency records, readers' rate items, the schedule, webhooks and
// their outbox, and numbered pages' indexes.
//
// The change feed reads one stream for the table, so an event carries the
// id of the publication whose item changed (Event.Publication, read from
// the record's key), and a global item's record means no event.
//
// Every request of a Store passes the tenant guard of its table
// (dynamo.Table.Confine): a key outside the publication's prefix and the
// global families is refused before it reaches DynamoDB
// (dynamo.ErrOutsideSpace) and counted (TenantViolations). A Scan, which
// names no key (Check), is cut to the publication's items and the global
// ones. Only the layout migration works without the guard, as it moves
// items into a publication.
//
// # A Store in another publication
//
// Store.In(pubID) returns a shallow copy of the Store whose ks is
// keys.In(pubID) and whose db is the same table confined to that space,
// with its own siteCache, claimed and hints, taken from a map by
// publication id that the root Store holds (so two requests of one
// publication share them; publication_stores.go); the client, the
// clock, the cursor keys and the change feed's store (global) are
// shared. Nothing else in the Store names a publication: every key is
// built from s.ks.
//
// # Counters
//
// pageCount on STATS counts published static pages (the sitemap's index
// reads it); the checker compares it with the pages.
//
// postCount on authors, categories and STATS counts published posts,
// scheduled ones included, and their "scheduled" map holds an entry
// (post id → publishedAt) for each post that was scheduled when it was
// written; it may be empty. (Tables of layout 1 also hold an entry "-"
// with no time, which counts as one whose time has passed, until they are
// migrated.)
// A reader subtracts the entries still in the future, so the
// count it returns (Author.PostCount, Category.PostCount, Stats.PostCount)
// is the number of posts its lists show, and grows the moment a scheduled
// post appears, with no write; Author.ScheduledCount is the rest. A post
// write adds, moves or removes its own entries; a write that adds one
// reads the counters first (one more BatchGetItem) and removes the entries
// whose time has passed, each on the condition that it is unchanged, so
// the maps hold little more than the posts still waiting.
//
// The same items count their posts by month of publication (UTC), in one
// top-level attribute per month, "month#2026-03", which the same update
// adds to (ADD creates a missing attribute, so items written before the
// attribute existed need nothing first; a nested map would need its map
// made first, and its entries removed). A month counts scheduled posts
// from the start, like postCount; a reader subtracts the entries of the
// scheduled map still in the future from their months, so Archive is what
// the lists show, and one GetItem reads the months with those entries,
// which separate month items could not give in one request. A post write
// adds no action for them: they are part of the counters' updates. A
// month whose count falls to 0 keeps its attribute at 0 and is not shown.
//
// commentCount counts published comments that are not deleted, replies
// included; threadCount counts published top-level comments, tombstones
// included; a comment's replyCount its published replies. Pending and
// rejected comments count nowhere.

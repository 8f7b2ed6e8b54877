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
//	item                      PK                 SK                                     GSI1PK / GSI1SK
//	author                    AUTHOR#<id>        AUTHOR#<id>                            AUTHORS / AUTHOR#<createdAt>#<id>   (postCount, scheduled)
//	post (published)          POST#<id>          POST#<id>                              FEED#<shard> / POST#<publishedAt>#<id>
//	post (draft)              POST#<id>          POST#<id>                              DRAFT#<authorId> / DRAFT#<createdAt>#<id>
//	author→post copy          AUTHOR#<authorId>  POST#<publishedAt>#<id>
//	post-in-category copy     POST#<id>          CAT#<slug>                             CAT#<slug> / POST#<publishedAt>#<id>
//	category                  CAT#<slug>         CAT#<slug>                             CATEGORIES / CAT#<slug>             (postCount, scheduled)
//	comment (top level)       POST#<postId>      COMMENT#<createdAt>#<commentId>        (replyCount, replies: the first 10)
//	reply                     POST#<postId>      THREAD#<parentCreatedAt>#<parentId>#<createdAt>#<commentId>
//	comment (pending)         POST#<postId>      HELD#<createdAt>#<commentId>           MODQ#<postAuthorId> / <createdAt>#<postId>#<commentId>
//	comment (rejected)        POST#<postId>      HELD#<createdAt>#<commentId>           (expiresAt TTL)
//	admins' queue entry       MODQ               <createdAt>#<postId>#<commentId>       (copy of a pending comment)
//	reader                    READER#<sub>       READER#<sub>                           (name, avatarUrl)
//	reader's rate             RATE#READER#<sub>  (same)                                 (recent, version, expiresAt TTL)
//	slug reservation          SLUG#<slug>        SLUG#<slug>                            (postId)
//	blog-wide counts          STATS              STATS                                  (postCount, scheduled, authorCount, categoryCount)
//	idempotency record        IDEMPOTENCY#<op>#<key>  (same)                            (hash, result, expiresAt TTL)
//	server key                SECRET#<name>      SECRET#<name>                          (value: 32 random bytes)
//
// Copies are summaries: every attribute of the post but the body. Posts and
// copies carry the author's name and the categories' names (authorName,
// cats) together with the version of each name they hold (authorVer,
// catVer), so lists need no extra reads; a rename rewrites them (below).
//
// # Access patterns
//
//	pattern                              request
//	post by id                           GetItem POST#id (BatchGetItem for many)
//	post by slug                         GetItem SLUG#slug, then GetItem POST#id
//	author's posts, newest first         Query PK=AUTHOR#id, SK BETWEEN "POST#" AND "POST#<now>$", descending
//	                                     (AND "POST#~" for the author and admins: scheduled posts too)
//	author's drafts                      Query GSI1 GSI1PK=DRAFT#authorId, descending
//	category's posts, newest first       Query GSI1 GSI1PK=CAT#slug, GSI1SK < "POST#<now>$", descending
//	latest posts, whole blog             Query GSI1 GSI1PK=FEED#0..FEED#3 in parallel, GSI1SK < "POST#<now>$", merged
//	post's comments, oldest first        Query PK=POST#id, begins_with(SK, "COMMENT#"); each brings its first 10 replies
//	more replies of one comment          Query PK=POST#id, begins_with(SK, "THREAD#<parent>#"), after the cursor
//	pending comments on an author's      Query GSI1 GSI1PK=MODQ#authorId, descending
//	posts, newest first
//	all pending comments, newest first   Query PK=MODQ, descending
//	comment by id                        BatchGetItem of its COMMENT#/THREAD# key and its HELD# key
//	who wrote comments                   BatchGetItem of AUTHOR#id and READER#sub keys together
//	all authors / all categories         Query GSI1 GSI1PK=AUTHORS / CATEGORIES
//	authors, categories, posts by id     BatchGetItem, 100 keys a call, UnprocessedKeys retried with backoff
//	blog-wide counts                     GetItem STATS
//	post (with a comment) before a write GetItem POST#id (BatchGetItem with the comment), ConsistentRead
//
// Lists ask for one item more than the page, so whether another page
// follows costs no request. Cursors are opaque (base64url of the list's
// name, the last item's key attributes and a checksum); one from another
// list, or altered, is an invalid-input error.
//
// Reads are eventually consistent, as DynamoDB's GSIs always are: a write
// shows in the lists a moment (usually well under a second) after it
// returns. Writes read with ConsistentRead, so they never act on stale data.
//
// # Scheduled posts
//
// A post published with a future publishedAt is scheduled. Its copies are
// written at once, but every public list bounds its sort key by
// "POST#<now>$", so the post appears when its time passes with no
// background job.
//
// # The feed without a hot partition
//
// The whole-blog feed is the post items themselves in GSI1, spread over
// four partitions FEED#0..FEED#3 by a hash of the post id. A page queries
// all four at once (four requests, one round trip of latency, whatever the
// page size) and merges them; the cursor is the last item's GSI1SK, which
// bounds every shard. No single partition takes every publish and every
// feed read, and a partition never grows with time beyond a quarter of the
// blog. A shard cut short by DynamoDB's 1 MB page limit caps the page at
// its last item, so a merged page never skips an item.
//
// # Drafts
//
// A draft has no copies: it is only the post item, listed for its author
// in GSI1 under DRAFT#<authorId>. Publishing writes the copies and moves
// the post item's GSI1 entry to its feed shard; unpublishing reverses it.
//
// # Writes
//
// Every post write (create, edit, publish, schedule, unpublish, delete) is
// one TransactWriteItems that puts the post, puts or deletes its copies and
// slug reservation, and adds to the post counts of its author, its
// categories and the blog. Conditions guard it: attribute_not_exists on
// creates and slugs; on the post, the version and comment count that were
// read (the copies copy them); on the author and categories, the version of
// the names being copied. A failed condition is read from the
// cancellation reasons: a stale expected version is a ConflictError, a
// taken slug ErrSlugTaken; a comment or rename that slipped in between
// makes the write read again and retry. A transaction conflict with a
// concurrent writer is retried with backoff. Reads a write needs are one
// BatchGetItem (or GetItem) with ConsistentRead.
//
// Adding a comment is one transaction: the comment, commentCount (and
// threadCount for a top-level comment) on the post and on each copy, and
// for a reply its parent rewritten with replyCount and the replies it
// carries, guarded by the post's version and the parent's. A deleted
// comment with replies stays as a tombstone (deleted, no body); replies
// answer top-level comments only.
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
// is gone.
//
// # Renames
//
// Renaming an author or a category bumps its nameVer in one write, then
// rewrites the names in every post of the author (published and drafts) or
// every published post of the category: one transaction per post covering
// the post and all its copies, guarded by the post's version and by the
// author's and categories' current nameVer, so a slow rename never
// overwrites a newer one. A post written meanwhile checks the same nameVer
// and re-reads the names. Drafts keep the category names they were last
// saved with (they are in no category's list): the GraphQL layer reads a
// draft's categories instead of trusting the copied names.
//
// # Idempotency
//
// A write given an idempotency key records, in its own transaction, an
// item IDEMPOTENCY#<op>#<key> with the hash of the input and the result,
// and passes a token derived from op and key as ClientRequestToken. A
// repeat with the same input returns the recorded result; with other input
// ErrIdempotencyMismatch. Records expire after 24 hours (TTL attribute
// expiresAt). The store takes keys as they come; the GraphQL layer scopes a
// client's key to its user (a hash of the token's subject and the key), so
// one user's key never replays another's result.
//
// # Server keys
//
// Keys the servers sign with (tokens, cursors) can live in the table:
// Secret makes a random one the first time it is asked for, with
// attribute_not_exists, so every server on the table, and a server after a
// restart, uses the same key without any configuration.
//
// # Counters
//
// postCount on authors, categories and STATS counts published posts,
// scheduled ones included, and their "scheduled" map holds an entry
// (post id → publishedAt) for each post that was scheduled when it was
// written, and an entry "-" with no time that keeps it from ever being
// empty. A reader subtracts the entries still in the future, so the
// count it returns (Author.PostCount, Category.PostCount, Stats.PostCount)
// is the number of posts its lists show, and grows the moment a scheduled
// post appears, with no write; Author.ScheduledCount is the rest. A post
// write adds, moves or removes its own entries; a write that adds one
// reads the counters first (one more BatchGetItem) and removes the entries
// whose time has passed, each on the condition that it is unchanged, so
// the maps hold little more than the posts still waiting.
//
// commentCount counts published comments that are not deleted, replies
// included; threadCount counts published top-level comments, tombstones
// included; a comment's replyCount its published replies. Pending and
// rejected comments count nowhere.
package storage

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
//	comment (top level)       POST#<postId>      COMMENT#<createdAt>#<commentId>
//	reply                     POST#<postId>      THREAD#<parentCreatedAt>#<parentId>#<createdAt>#<commentId>
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
//	post's comments, oldest first        Query PK=POST#id, begins_with(SK, "COMMENT#")
//	replies to a page of comments        Query PK=POST#id, SK BETWEEN "THREAD#<first>#" AND "THREAD#<last>#~" (one for all)
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
// the parent's replyCount for a reply, guarded by the post's version. A
// deleted comment with replies stays as a tombstone (deleted, no body);
// replies answer top-level comments only.
//
// Deleting a post removes its comments after the transaction, in batches:
// they can outnumber a transaction's 100 actions, and no reader can reach
// them once the post is gone.
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
// written; it may be empty. (Tables written by earlier versions also hold
// an entry "-" with no time, which counts as one whose time has passed.)
// A reader subtracts the entries still in the future, so the
// count it returns (Author.PostCount, Category.PostCount, Stats.PostCount)
// is the number of posts its lists show, and grows the moment a scheduled
// post appears, with no write; Author.ScheduledCount is the rest. A post
// write adds, moves or removes its own entries; a write that adds one
// reads the counters first (one more BatchGetItem) and removes the entries
// whose time has passed, each on the condition that it is unchanged, so
// the maps hold little more than the posts still waiting.
//
// commentCount counts comments that are not deleted, replies included;
// threadCount counts top-level comments, tombstones included.
package storage

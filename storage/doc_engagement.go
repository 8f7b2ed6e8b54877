package storage

// The table's design for views and reactions, continued from doc.go (the
// package comment) and doc_layout.go. Every key is built by a function of
// package keys (keys/views.go, keys/reactions.go).
//
// # Views and reactions
//
//	item                      PK             SK                              GSI1PK / GSI1SK
//	post's views              POST#<id>      VIEWS                           (viewCount, w#<YYYY-Www>, m#<YYYY-MM>: all time, this and last week and month; d#<YYYY-MM-DD>, r#<YYYY-MM-DD>#<domain>: today's views and referrers until they move; moves)
//	post's views of a day     POST#<id>      VIEWS#<YYYY-MM-DD>              (views, ref#<domain>: views by referrer domain, moves, expiresAt TTL: 400 days)
//	popular entry             POST#<id>      POPULAR#<period>#<bucket>       POPULAR#<period>#<bucket> / <15-digit views>#<id>   (views, postId, version, post: the summary, expiresAt TTL: 62 days)
//	reaction counts           POST#<postId>  REACTIONS#<POST or commentId>   (LIKE, LOVE, CLAP, INSIGHTFUL: counts)
//	a reader's reactions      POST#<postId>  REACT#<POST or commentId>#<readerId>   (kinds: string set)
//
// Views are counted by each server in memory (package views), once per
// visitor per post per UTC day, and added at most once a second per post
// per server (FlushViews): one UpdateItem ADD on the views item, whatever
// the number of views, which counts the day's views and referrer domains
// too. The first flush of a post on a later day moves the past days'
// counts to their day items (MoveViewDays, viewdays.go): one
// TransactWriteItems a post a day, conditional on the views item being as
// the flush read it. DynamoDB applies the ADDs of many servers to one
// item one after another, losing none, and a partition takes 1,000 write
// units a second: at one write a second per server (a few KB at most, the
// day's referrers included), one item per post serves hundreds of servers
// before it throttles, so views need no write sharding. Sharding would
// cost a read of every shard on every post page; the flusher's
// aggregation already does what the shards would.
//
// The popular lists are GSI1 partitions, one per period and bucket (the
// day, the ISO week, the month, UTC), sorted by a zero-padded count, so a
// list is one Query. Each viewed post's entries are written from the
// counts its flush returned (ReturnValues ALL_NEW), at most once a
// views.DefaultPopularEvery per post per server (WritePopular), on the
// condition that the entry ranks the post lower: a server whose count is
// older never moves it down. A list's partition takes a write per viewed
// post every few seconds per server, not one per flush: the views item
// itself carries no GSI1 keys, as every flush would then write the index.
// An entry carries the post's summary (a category copy's, no body) and
// its version, so popularPosts is one Query (popular.go): WritePopular
// reads the post item before it writes the entries, and a post write
// that hides a post puts tombstones over its entries of the current
// buckets in its own transaction, so a hidden post leaves the lists at
// once and an edit shows at the post's next popular write.
//
// Post.stats reads the post's views item (the days not moved yet), then
// its day items of the period: one GetItem and one Query, strongly
// consistent, a day counted once across a move that comes between. Post
// viewCount reads the views items of an operation's posts: one
// BatchGetItem. Neither is copied onto the post's summaries: a copy would
// be written at every flush (or by the change feed, after every flush),
// and a listing that does not ask for views pays nothing.
//
// A reaction is one TransactWriteItems (React, Unreact): the reader's
// item gains the kind on the condition that it lacks it (a repeat does
// nothing), the count item adds 1; taking back removes the kind on the
// condition that the item has it and adds -1 on the condition that the
// count is positive. So a count is the number of readers holding the
// kind, never negative, whatever the concurrency. React also checks, in
// the transaction, that the post is published and visible (its count
// item) and the comment exists and is not deleted. A reader signed in by
// a reader session must be a member of the publication to react: the
// transaction checks that the membership item (MEMBER#<accountId>)
// exists, which costs no request; tokens of the staff's key, and reader
// tokens a frontend signs for its own readers, vouch for the reader
// themselves. The counts have an
// item of their own, apart from the post's count item, which comments
// write in transactions, and from the views item, which flushes write
// outside any. Neither views nor reactions make events of the change
// feed: nothing about a reader leaves the table, and answers showing them
// are never kept by the answer cache.

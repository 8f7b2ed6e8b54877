package storage

// Comment counts on summaries
//
// A post's comment count shows in two places. The post's own page shows
// the authoritative count (readCommentCount, tagged TagComments). Every
// list shows the count its summary holds: the post item, which is the
// feed's entry, and its copies, one per author (the primary one and each
// co-author), per category, per tag, and the featured copy (tagged
// TagCounts).
//
// Summaries follow the authoritative count through the change feed, not
// in a comment's transaction, so a comment pays for what it changes and
// comments on one post do not all contend for its copies. The "counts"
// worker (CountSync, countsync.go), which one server of the fleet runs
// under its lease, reads the comment events and the post events (a post
// write puts its summaries with the count it read) and syncs each post
// they name: SyncCounts reads the post item, its copies and the
// authoritative count, and updates each item whose count differs, on the
// condition that it exists with the count read, copies first and the post
// item last. (While the post item holds the authoritative count itself, as
// in this layout, only copies are ever written.) A post is synced at once after a quiet second, otherwise when
// CountSyncEvery (1 s) has passed since its last sync began: each summary
// gets at most one write a second however many comments arrive. The
// worker's checkpoint stays before the first event of every post not yet
// synced (CountSync.Hold), so a restart or a takeover reads those events
// again.
//
// The post item's count change is the event post.counts.updated (events.go),
// whose CacheTags are TagCounts(postID): once a sync, after the copies,
// so an answer cache or a CDN purged by it reads the new counts. A copy
// repaired while the post item was already right (a drift) changes no
// post item and purges nothing.
//
// Lag. A summary's count may differ from the authoritative one for a
// moment: about a second after the post's last comment, plus the change
// feed's latency. Check (check.go, checkcounts.go) tells a copy that
// differs from its post only by its comment count, reads it again after
// CountLag (5 s, WithCountLag) and reports it only when it still differs,
// with how long it lagged.

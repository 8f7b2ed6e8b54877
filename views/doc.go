// Package views counts the views of posts: a beacon a page sends from the
// browser (POST /v/<postId>, Beacon) and the recordView mutation both hand
// a hit to a Counter, which counts a visitor once per post per day,
// aggregates in memory and adds what it counted to the table at most once
// a FlushEvery per post (storage.FlushViews: one write a post, and one
// more a day to move the past day to its own item).
//
// What is kept, and for how long: nothing that names a visitor leaves the
// process. A visitor is a 64-bit hash of (IP address, user agent, post)
// under a seed drawn at random each UTC day and never written out; the
// set of hashes is dropped with the seed when the day turns, so the
// hashes of two days cannot be linked, and a restart forgets them (a
// visitor may then be counted again that day). The table keeps counts
// only: per post, all time, per day (with the referrer's domain, no path)
// and per popularity period.
//
// Several servers: each keeps its own set, so a visitor whose beacons
// reach two servers on the same day is counted once by each (at most once
// per server). A load balancer with client affinity avoids it; without
// one, views overcount by at most the number of servers a visitor meets.
//
// Publications: one Counter serves every publication of a table; In
// gives the counter of one, whose hits are checked against and flushed
// into that publication's posts, sharing the memory, bounds and flushes
// of the server's one counter, so neither memory nor goroutines grow
// with the publications.
//
// What a kill -9 loses: the views counted since the last flush, at most
// FlushEvery of that server's views (the process ending cleanly flushes
// them, Run).
package views

package main

import "log/slog"

// minStreams is the least default bound on the server's streams, for an
// open-file limit too small to halve.
const minStreams = 64

// maxStreams returns the bound on the subscription streams open at once
// on the server: -max-streams, or half the open-file limit, each stream
// holding one descriptor, so that the other half is left for DynamoDB's
// connections, the requests and the data files. Zero, where the limit
// is unknown, is no bound.
func maxStreams(configured int, logger *slog.Logger) int {
	if configured > 0 {
		return configured
	}
	files, ok := openFileLimit()
	if !ok {
		logger.Warn("the open-file limit is unknown: subscription streams are bounded per address only; set -max-streams")
		return 0
	}
	n := max(int(files/2), minStreams)
	logger.Info("subscription streams bounded by the open-file limit", "max_streams", n, "open_files", files)
	return n
}

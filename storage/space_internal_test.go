package storage

import "github.com/blogql/blog/storage/internal/keys"

// testKS is the key space of the default publication, which the internal
// tests' stores are in.
var testKS = keys.MustIn(DefaultPublication)

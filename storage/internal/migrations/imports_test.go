package migrations

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsOnlyPrimitives keeps the layout steps frozen: besides the
// standard library, the AWS SDK and errgroup, they import the table
// primitives and the Markdown renderer alone, never package storage or
// another package of this module (package storage itself cannot be
// imported: it imports this package, and the compiler refuses the
// cycle). A step that needs more of today's code gets its own copy.
func TestImportsOnlyPrimitives(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"github.com/blogql/blog/markdown":                true,
		"github.com/blogql/blog/storage/internal/dynamo": true,
		"golang.org/x/sync/errgroup":                     true,
	}
	for _, path := range pkg.Imports {
		first, _, _ := strings.Cut(path, "/")
		switch {
		case !strings.Contains(first, "."): // the standard library
		case strings.HasPrefix(path, "github.com/aws/aws-sdk-go-v2/"):
		case allowed[path]:
		default:
			t.Errorf("package migrations imports %s: a layout step uses only the table primitives and its own copies of item shapes and keys", path)
		}
	}
}

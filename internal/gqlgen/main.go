// Command gqlgen generates the GraphQL code of graph/ from gqlgen.yml, as
// `gqlgen generate` does, with one plugin more: the resolver fields named
// in inline run in the goroutine of the object they belong to instead of
// one of their own. `go generate ./...` runs it (graph/resolver.go).
//
// gqlgen runs every resolver field in a goroutine (only the Mutation type
// is exempt), and a page of 20 posts asks for some 80 of them: each post's
// id, author and categories. For a resolver that computes its value from
// the object (a global id, null for an empty string) or returns what the
// reads started for its page hold, the goroutine and the stack it grows
// cost more than the field; resolvers that may read on their own keep
// theirs, so that the reads of one object's fields still overlap.
package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
)

// inline lists, by type, the resolver fields that run in their object's
// goroutine. Each computes its value from its object and the resolver's
// settings, except Post.author and Post.categories: they return the names
// the post carries, or what the reads started for the post's page (or the
// post) loaded, and wait for those only (graph/loaders.go, "Primed in the
// background").
var inline = map[string][]string{
	"ArchiveMonth":    {"month", "startsAt", "endsAt"},
	"Author":          {"id", "avatarUrl", "website", "location"},
	"Category":        {"id"},
	"Comment":         {"id", "status"},
	"Commenter":       {"name", "avatarUrl", "isAuthor", "author"},
	"Image":           {"width", "height"},
	"MenuItem":        {"kind", "slug", "url", "path"},
	"Page":            {"id", "toc", "seo", "status", "parentId"},
	"Post":            {"id", "status", "author", "categories"},
	"Revision":        {"id", "seo"},
	"Site":            {"title", "description", "logoUrl", "iconUrl", "locale", "timezone", "url", "postPath", "pagePath"},
	"Webhook":         {"id", "events", "description", "disabledReason", "previousSecretExpiresAt"},
	"WebhookDelivery": {"eventType", "statusCode", "durationMs", "error", "nextAttemptAt"},
}

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		fail(err)
	}
	if err := api.Generate(cfg, api.AddPlugin(inlineFields{})); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gqlgen:", err)
	os.Exit(1)
}

// inlineFields is the plugin that makes the fields of inline run without
// a goroutine. It fails on a name that is not a resolver field, so the
// list follows the schema and gqlgen.yml.
type inlineFields struct{}

func (inlineFields) Name() string { return "inline-fields" }

// GenerateCode runs before the code is written: it gives each listed
// field a copy of its object that disables concurrency, which is what
// gqlgen asks of a field (codegen.Field.IsConcurrent) before it wraps it
// in a goroutine. The object itself, and its other fields, are unchanged.
func (inlineFields) GenerateCode(data *codegen.Data) error {
	var missing []string
	for typ, names := range inline {
		obj := data.Objects.ByName(typ)
		for _, name := range names {
			f := fieldOf(obj, name)
			if f == nil || !f.IsResolver {
				missing = append(missing, typ+"."+name)
				continue
			}
			sequential := *f.Object
			sequential.DisableConcurrency = true
			f.Object = &sequential
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("inline fields that are not resolver fields: %s", strings.Join(missing, ", "))
	}
	return nil
}

func fieldOf(obj *codegen.Object, name string) *codegen.Field {
	if obj == nil {
		return nil
	}
	for _, f := range obj.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

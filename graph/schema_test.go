package graph

import (
	"strings"
	"testing"
)

// TestSchemaIsDocumented keeps the promise generated clients rely on: every
// type, field, argument, enum value and input field has a description.
func TestSchemaIsDocumented(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	if post := schema.Types["Post"]; post == nil || post.BuiltIn {
		t.Fatal("the schema's own types are not visible to this check")
	}
	for name, def := range schema.Types {
		if def.BuiltIn || strings.HasPrefix(name, "__") {
			continue
		}
		if def.Description == "" {
			t.Errorf("type %s has no description", name)
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			if f.Description == "" {
				t.Errorf("field %s.%s has no description", name, f.Name)
			}
			for _, a := range f.Arguments {
				if a.Description == "" {
					t.Errorf("argument %s.%s(%s) has no description", name, f.Name, a.Name)
				}
			}
		}
		for _, v := range def.EnumValues {
			if v.Description == "" {
				t.Errorf("enum value %s.%s has no description", name, v.Name)
			}
		}
	}
}

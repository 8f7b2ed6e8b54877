// Lint rules for schema.graphqls: every rule graphql-schema-linter has,
// the Relay and description rules included, except the three below.
//
// Disabled: type-fields-sorted-alphabetically,
// input-object-fields-sorted-alphabetically and
// interface-fields-sorted-alphabetically. Fields are listed in the order a
// reader of the schema needs them: the id first, then what a page shows,
// then counts and connections; inputs name what they act on before what
// they change, with idempotencyKey last. GraphiQL's docs and the generated
// clients keep that order, and field order carries no meaning for
// clients, so sorting would only scatter related fields.
module.exports = {
  rules: [
    'arguments-have-descriptions',
    'defined-types-are-used',
    'deprecations-have-a-reason',
    'descriptions-are-capitalized',
    'enum-values-all-caps',
    'enum-values-have-descriptions',
    'enum-values-sorted-alphabetically',
    'fields-are-camel-cased',
    'fields-have-descriptions',
    'input-object-values-are-camel-cased',
    'input-object-values-have-descriptions',
    'relay-connection-arguments-spec',
    'relay-connection-types-spec',
    'relay-page-info-spec',
    'types-are-capitalized',
    'types-have-descriptions',
  ],
};

package model

// Node is an object with a global id: *storage.Post, *storage.Author,
// *storage.Category, *storage.Comment or *storage.SitePage. It is empty because the domain
// types know nothing of GraphQL; the generated code switches on the concrete
// type.
type Node any

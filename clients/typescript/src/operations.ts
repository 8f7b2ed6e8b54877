import { graphql } from './gql';

// The operations a blog frontend sends. Codegen reads them from here and
// generates their result and variable types into ./gql.

/** What a listing shows of each post. */
export const PostSummaryFragment = graphql(`
  fragment PostSummary on Post {
    id
    slug
    title
    excerpt
    publishedAt
    commentCount
    author {
      id
      name
    }
    categories {
      slug
      name
    }
  }
`);

/** The category page: the category and its newest posts. */
export const CategoryPageQuery = graphql(`
  query CategoryPage($slug: String!, $first: Int, $after: String) {
    category(slug: $slug) {
      name
      description
      postCount
      posts(first: $first, after: $after) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        edges {
          node {
            ...PostSummary
          }
        }
      }
    }
  }
`);

/** The post page: the post, its author and categories, and its comments. */
export const PostPageQuery = graphql(`
  query PostPage($slug: String!) {
    post(slug: $slug) {
      ...PostSummary
      body
      version
      comments(first: 50) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        edges {
          node {
            id
            body
            createdAt
            deleted
            status
            commenter {
              name
              avatarUrl
              isAuthor
            }
            replyConnection(first: 3) {
              totalCount
              pageInfo {
                hasNextPage
                endCursor
              }
              edges {
                node {
                  id
                  body
                  createdAt
                  commenter {
                    name
                    avatarUrl
                    isAuthor
                  }
                }
              }
            }
          }
        }
      }
    }
  }
`);

/** The author page: the author and their newest posts. */
export const AuthorPageQuery = graphql(`
  query AuthorPage($id: ID!, $first: Int, $after: String) {
    author(id: $id) {
      name
      bio
      avatarUrl
      postCount
      posts(first: $first, after: $after) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        edges {
          node {
            ...PostSummary
          }
        }
      }
    }
  }
`);

/** The editor's publish button: publishes a post now or at a later time. */
export const PublishPostMutation = graphql(`
  mutation PublishPost($input: PublishPostInput!) {
    publishPost(input: $input) {
      post {
        id
        status
        publishedAt
        version
      }
    }
  }
`);

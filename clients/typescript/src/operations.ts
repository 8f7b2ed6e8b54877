import { graphql } from './gql';

// The operations a blog frontend sends. Codegen reads them from here and
// generates their result and variable types into ./gql. The Go end-to-end
// tests (tests/typescript_test.go) send these same documents to the server.

/** What a listing shows of each post. */
export const PostSummaryFragment = graphql(`
  fragment PostSummary on Post {
    id
    slug
    title
    excerpt
    publishedAt
    commentCount
    readingTimeMinutes
    coverImage {
      url
      alt
      width
      height
    }
    author {
      id
      name
      slug
    }
    categories {
      slug
      name
    }
    authors {
      id
      name
      slug
    }
    tags {
      slug
      name
    }
  }
`);

/** Where a page of posts stands: the cursors of the pages before and after it. */
export const PageLinksFragment = graphql(`
  fragment PageLinks on PageInfo {
    hasNextPage
    hasPreviousPage
    startCursor
    endCursor
  }
`);

/** The category page: the category and a page of its posts, newest first, either way. */
export const CategoryPageQuery = graphql(`
  query CategoryPage($slug: String!, $first: Int, $after: String, $last: Int, $before: String) {
    category(slug: $slug) {
      name
      description
      postCount
      posts(first: $first, after: $after, last: $last, before: $before) {
        totalCount
        pageInfo {
          ...PageLinks
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

/**
 * The search results page: a page of results, best first, each with its
 * post's card and its title and a passage of its body with the matches
 * marked, and the categories of the whole result to narrow it.
 */
export const SearchPageQuery = graphql(`
  query SearchPage($query: String!, $first: Int, $after: String, $category: String) {
    search(query: $query, first: $first, after: $after, category: $category) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      categories {
        slug
        count
        category {
          name
        }
      }
      edges {
        node {
          title
          snippet
          post {
            ...PostSummary
          }
        }
      }
    }
  }
`);

/** The post page: the post rendered, its author and categories, its comments, and its neighbours. */
export const PostPageQuery = graphql(`
  query PostPage($slug: String!) {
    post(slug: $slug) {
      ...PostSummary
      bodyHtml
      wordCount
      toc {
        level
        text
        anchor
      }
      seo {
        title
        description
        canonicalUrl
        ogImage
      }
      version
      previous {
        slug
        title
      }
      next {
        slug
        title
      }
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

/** The author page, from the slug in its URL: the author, their months and a page of their posts. */
export const AuthorPageQuery = graphql(`
  query AuthorPage($slug: String!, $first: Int, $after: String) {
    author(slug: $slug) {
      slug
      name
      bio
      avatarUrl
      postCount
      archive {
        year
        month
        postCount
      }
      posts(first: $first, after: $after) {
        totalCount
        pageInfo {
          ...PageLinks
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

/** A month of the blog: the months that have posts, and a page of the month's posts. */
export const MonthArchiveQuery = graphql(`
  query MonthArchive($publishedAfter: DateTime!, $publishedBefore: DateTime!, $first: Int, $after: String) {
    archive {
      year
      month
      postCount
    }
    posts(publishedAfter: $publishedAfter, publishedBefore: $publishedBefore, first: $first, after: $after) {
      totalCount
      pageInfo {
        ...PageLinks
      }
      edges {
        node {
          ...PostSummary
        }
      }
    }
  }
`);

/** A draft or scheduled post, for whoever holds a preview link. */
export const PreviewPageQuery = graphql(`
  query PreviewPage($token: String!) {
    post(previewToken: $token) {
      ...PostSummary
      status
      bodyHtml
      toc {
        level
        text
        anchor
      }
    }
  }
`);

/** The editor's share button: a preview link for a reviewer without an account. */
export const CreatePreviewLinkMutation = graphql(`
  mutation CreatePreviewLink($input: CreatePreviewLinkInput!) {
    createPreviewLink(input: $input) {
      token
      expiresAt
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

/**
 * Where the event log stands: a page reads it before its data, and its
 * live comment thread subscribes after it, so that nothing written in
 * between is missed.
 */
export const LiveCursorQuery = graphql(`
  query LiveCursor {
    liveCursor
  }
`);

/** The post page's live comment thread: comments and replies as they are published. */
export const CommentAddedSubscription = graphql(`
  subscription CommentAdded($postId: ID!, $after: String) {
    commentAdded(postId: $postId, after: $after) {
      cursor
      comment {
        id
        body
        createdAt
        deleted
        parent {
          id
        }
        commenter {
          name
          avatarUrl
          isAuthor
        }
      }
    }
  }
`);

/** The site's header and navigation: its settings and the published static pages, for a layout. */
export const NavigationFragment = graphql(`
  fragment Navigation on Query {
    site {
      title
      description
      locale
      logoUrl
      menus {
        name
        items {
          label
          kind
          path
        }
      }
    }
    pages(first: 100) {
      edges {
        node {
          id
          slug
          title
          parentId
        }
      }
    }
  }
`);
/** The home page: the featured posts on top, then a page of the latest posts. */
export const HomePageQuery = graphql(`
  query HomePage($featured: Int!, $first: Int, $after: String, $last: Int, $before: String) {
    featuredPosts(first: $featured) {
      edges {
        node {
          ...PostSummary
        }
      }
    }
    posts(first: $first, after: $after, last: $last, before: $before) {
      totalCount
      pageInfo {
        ...PageLinks
      }
      edges {
        node {
          ...PostSummary
        }
      }
    }
  }
`);

/**
 * A static page by its slug (/<slug>), with the layout's navigation: the
 * page (two reads), the published pages (one Query) and the site's
 * settings (held by the server: no read).
 */
export const StaticPageQuery = graphql(`
  query StaticPage($slug: String!) {
    page(slug: $slug) {
      slug
      title
      bodyHtml
      toc {
        level
        text
        anchor
      }
      seo {
        title
        description
        canonicalUrl
        ogImage
      }
      updatedAt
    }
    ...Navigation
  }
`);

/** The tag page: the tag and a page of its posts, newest first, either way, with their co-authored bylines. */
export const TagPageQuery = graphql(`
  query TagPage($slug: String!, $first: Int, $after: String, $last: Int, $before: String) {
    tag(slug: $slug) {
      slug
      name
      postCount
      posts(first: $first, after: $after, last: $last, before: $before) {
        totalCount
        pageInfo {
          ...PageLinks
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
/** The series page: the series and a page of its posts, in the series' order. */
export const SeriesPageQuery = graphql(`
  query SeriesPage($slug: String!, $first: Int, $after: String, $last: Int, $before: String) {
    series(slug: $slug) {
      slug
      title
      description
      coverImage {
        url
        alt
        width
        height
      }
      owner {
        name
        slug
      }
      posts(first: $first, after: $after, last: $last, before: $before) {
        pageInfo {
          ...PageLinks
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

/** A post's place in its series, for the "part n of" box of the post page. */
export const PostSeriesQuery = graphql(`
  query PostSeries($slug: String!) {
    post(slug: $slug) {
      series {
        position
        series {
          slug
          title
        }
        previous {
          slug
          title
        }
        next {
          slug
          title
        }
      }
    }
  }
`);

// Numbered pages (src/numbered.ts): page 1 holds the oldest posts, so a
// page keeps its posts when newer ones are published.

/** A numbered page of a category's posts, with the category: two requests. */
export const NumberedCategoryPageQuery = graphql(`
  query NumberedCategoryPage($slug: String!, $number: Int!, $size: Int) {
    category(slug: $slug) {
      name
      description
      postPage(number: $number, size: $size) {
        ...NumberedPosts
      }
    }
  }
`);

/** A numbered page of an author's posts, co-written ones included, from the slug in its URL. */
export const NumberedAuthorPageQuery = graphql(`
  query NumberedAuthorPage($slug: String!, $number: Int!, $size: Int) {
    author(slug: $slug) {
      slug
      name
      bio
      avatarUrl
      postPage(number: $number, size: $size) {
        ...NumberedPosts
      }
    }
  }
`);

/** A numbered page of a series in its order, with the series and its owner. */
export const NumberedSeriesPageQuery = graphql(`
  query NumberedSeriesPage($slug: String!, $number: Int!, $size: Int) {
    series(slug: $slug) {
      title
      description
      owner {
        name
        slug
      }
      postPage(number: $number, size: $size) {
        ...NumberedPosts
      }
    }
  }
`);

/** A numbered page of the posts published in one month of the whole blog ("2026-02"). */
export const NumberedMonthPageQuery = graphql(`
  query NumberedMonthPage($month: String!, $number: Int!, $size: Int) {
    postPage(month: $month, number: $number, size: $size) {
      ...NumberedPosts
    }
  }
`);

/** What a numbered page shows of its list: where it stands and its posts, oldest first. */
export const NumberedPostsFragment = graphql(`
  fragment NumberedPosts on PostPage {
    number
    totalPages
    totalCount
    nodes {
      ...PostSummary
    }
  }
`);

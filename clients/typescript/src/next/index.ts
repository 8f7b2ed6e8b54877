// The Next.js (16, App Router) integration of the blog's TypeScript client:
// the fetcher that tags cache entries from the answers (fetch.ts), the
// webhook's route handler (webhook.ts) and preview links in draft mode
// (draft.ts). docs/nextjs.md is the quickstart.
export { draftModeHandler, exitDraftModeHandler, previewCookie, previewToken } from './draft';
export { nextEndpoint, type NextEndpointOptions } from './fetch';
export { answerTags, fitTags, sectionTag } from './tags';
export { type BlogEvent, revalidateHandler, type RevalidateOptions } from './webhook';

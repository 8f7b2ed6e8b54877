// The two functions of Next.js that examples/revalidate.ts calls, declared
// as next/cache exports them (Next.js 15), so CI type-checks the example
// without installing Next.js; and the process.env a route handler reads.
// In a Next.js app these come from `next` and `@types/node`: delete this
// file there.
declare module 'next/cache' {
  /** Purges the cached page at path (a route or, with "layout", everything below it). */
  export function revalidatePath(path: string, type?: 'page' | 'layout'): void;
  /** Purges every cached fetch and page tagged with tag. */
  export function revalidateTag(tag: string): void;
}

declare const process: { env: Record<string, string | undefined> };

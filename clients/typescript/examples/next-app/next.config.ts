import type { NextConfig } from 'next';

const config: NextConfig = {
  // 'use cache' and cacheTag: each cache entry is tagged with the tags of
  // the answers it holds (src/next/fetch.ts).
  cacheComponents: true,
  partialPrefetching: true,
};

export default config;

import type { CodegenConfig } from '@graphql-codegen/cli';

// Generates src/gql/ from the server's schema and the operations written in
// src/ with graphql(). Codegen fails when an operation no longer validates
// against the schema; tsc then checks the code that uses the results.
const config: CodegenConfig = {
  schema: '../../schema.graphqls',
  documents: ['src/**/*.ts', '!src/gql/**'],
  ignoreNoDocuments: false,
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        // Operations become typed strings that fetch can send as they are.
        documentMode: 'string',
        scalars: { DateTime: 'string' },
        strictScalars: true,
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;

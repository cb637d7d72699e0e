// Lint: the rules that catch real defects in an async server (floating promises, `any` leaking
// into src/), on top of typescript-eslint's recommended set. `npm run lint`; run by `npm test`.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'console/**', 'test/artifacts/**', 'bench/**', 'scripts/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // V8 (Node 20) adds every property given to a spread copy through its runtime (~0.7 µs each,
      // src/core/objects.ts): a computed key after a leading spread is always such a property
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement:first-child ~ Property[computed=true]',
          message: 'a computed key after a spread takes V8\'s slow path: use withEntry (src/core/objects.ts) or a literal',
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-floating-promises': 'off' },
  },
);

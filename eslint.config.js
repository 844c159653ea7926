import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The layers, top to bottom; `machines` at the bottom imports none of them. */
const ORDER = ['bin', 'gateway', 'ui', 'runtime', 'storage', 'machines'];
const layers = (...names) => names.map((n) => `**/${n}/**`);
/** Every layer a file in `name` may not import: the ones above it and, for ui/, its siblings. */
const above = (name, extra = []) => layers(...ORDER.slice(0, ORDER.indexOf(name)), ...extra);
const downward = (name, message, extra = []) => ({
  files: [`${name}/**/*.ts`],
  ignores: ['**/*.test.ts'],
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: above(name, extra), message }] }] },
});

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.data', 'test-artifacts', 'ui/dist'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  // Imports point down: bin/ (the composition root) -> gateway/, ui/ -> runtime/ -> storage/,
  // machines/. Anything else is a design bug, and no eslint-disable may hide one.
  {
    files: ['machines/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [
        { group: above('machines'), message: 'machines/ is pure: it imports only xstate, zod and noble/scure.' },
        { group: ['node:*', 'pg', 'nats', '@electric-sql/*', 'fastify'], message: 'machines/ does no I/O.' },
      ] }],
    },
  },
  downward('storage', 'storage/ sits under runtime/: it may import machines/ only.'),
  downward('runtime', 'runtime/ imports machines/ and storage/, never the edge or the composition root.'),
  downward('ui', 'ui/ imports machines/ only.', ['runtime', 'storage']),
  {
    files: ['gateway/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [
        { group: layers('bin', 'storage'), message: 'gateway/ imports runtime/ and machines/; storage is reached through runtime/, and bin/ wires the gateway, not the reverse.' },
        { group: ['**/ui/**', '!**/ui/build.ts'], allowTypeImports: true, message: 'gateway/ takes from ui/ only the built assets (ui/build.ts) and the page types.' },
      ] }],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);

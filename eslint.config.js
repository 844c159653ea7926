import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  {
    files: ['machines/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/runtime/**', '**/gateway/**', '**/storage/**', '**/ui/**'], message: 'machines/ is pure: it imports only xstate, zod and noble/scure.' },
        { group: ['node:*', 'pg', 'nats', '@electric-sql/*', 'fastify'], message: 'machines/ does no I/O.' },
      ] }],
    },
  },
  {
    files: ['runtime/**/*.ts', 'storage/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/gateway/**', '**/ui/**'], message: 'runtime/ and storage/ do not import the edge.' },
      ] }],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);

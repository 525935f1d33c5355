// ESLint with typescript-eslint's recommended rules (syntax only, no type information: it runs in
// seconds), over the sources and tests. `npm run lint`; CI runs it before the tests.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-base/', 'node_modules/', 'data/', 'test-output/', 'console/dist/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      // Unused names fail the TypeScript build already (noUnusedLocals); `_name` marks one kept on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Input checks look for control characters on purpose (ids, names, header values).
      'no-control-regex': 'off',
    },
  },
  {
    // Build scripts run in Node as plain ES modules.
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);

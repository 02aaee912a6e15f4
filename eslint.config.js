// Lint: typescript-eslint's recommended rules over the TypeScript sources (run by .ci/run).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/', 'node_modules/', 'reports/', 'assets/', '.ci-out/', 'kt-studies/']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {globals: {process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly'}},
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none'}],
    },
  },
)

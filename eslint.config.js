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
      // kt's sanitisers match control characters on purpose (they escape them in one-line errors)
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none'},
      ],
    },
  },
  // tests read untyped JSON output (a CLI's --json, a server's answer) as `any`
  {files: ['test/**/*.ts'], rules: {'@typescript-eslint/no-explicit-any': 'off'}},
)

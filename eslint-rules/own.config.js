// The project's own rules alone (the entries of eslint.config.js that use them, with their files and exceptions),
// without type information: seconds instead of minutes. `node_modules/.bin/eslint -c eslint-rules/own.config.js .`
// checks the SQL and domain-border rules only; eslint-rules/onsale.test.ts lints planted files with it.
import tseslint from 'typescript-eslint';
import full from '../eslint.config.js';

export default [
  // Only these rules run here: a disable comment for another rule is not "unused".
  { linterOptions: { reportUnusedDisableDirectives: 'off' } },
  ...full.filter((c) => c.ignores && Object.keys(c).length === 1),
  // The plugin is known (not its rules' settings) so the code's own eslint-disable comments still name real rules.
  { files: ['**/*.{ts,tsx}'], languageOptions: { parser: tseslint.parser }, plugins: { '@typescript-eslint': tseslint.plugin } },
  ...full.filter((c) => c.plugins && 'onsale' in c.plugins),
];

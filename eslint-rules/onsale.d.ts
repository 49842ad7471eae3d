// The project's ESLint plugin is plain JavaScript (ESLint loads it without a build step); its test imports it typed.
import type { ESLint } from 'eslint';

declare const onsale: ESLint.Plugin;
export default onsale;

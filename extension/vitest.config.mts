import { defineConfig } from 'vitest/config';

// Unit tests of the view models (pure TypeScript, no JupyterLab): `npm test`.
// isolate: false: test files share a worker's module registry, so jsdom (which 18 of the files
// ask for) is imported once per worker rather than once per file: 47 s -> 17 s on a loaded
// 2-core machine, most of the quick loop's TypeScript time. Each file still gets a fresh
// environment (vitest sets up the jsdom globals per file); a test that leaked module state into
// another file would show as an order-dependent failure here.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], environment: 'node', isolate: false }
});

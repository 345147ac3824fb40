import { defineConfig } from 'vitest/config';

// Unit tests of the view models (pure TypeScript, no JupyterLab): `npm test`.
// isolate: false: test files share a worker's module registry, so jsdom (which 18 of the files
// ask for) is imported once per worker rather than once per file: 47 s -> 17 s on a loaded
// 2-core machine, most of the quick loop's TypeScript time. The price: module state is shared
// between files, so a test must not rely on a module's first import (none does today: every
// file passes alone and together).
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], environment: 'node', isolate: false }
});

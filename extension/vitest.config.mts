import { defineConfig } from 'vitest/config';

// Unit tests of the view models (pure TypeScript, no JupyterLab): `npm test`.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], environment: 'node' }
});

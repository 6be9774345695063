import { defineConfig } from 'vitest/config';

// No React plugin: Vite's own transform handles TSX with the automatic JSX runtime.
// The bundle is written into papayu-app, which embeds it in every build (docs/DECISIONS.md D35):
// it is committed, and `cargo xtask ci` fails when it differs from a fresh build.
export default defineConfig({
  base: './',
  build: { outDir: '../crates/papayu-app/ui-dist', emptyOutDir: true, target: 'es2022', sourcemap: false, chunkSizeWarningLimit: 600 },
  server: { host: '127.0.0.1' },
  test: { include: ['src/**/*.test.ts'], environment: 'node' },
});

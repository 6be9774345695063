import { defineConfig } from 'vitest/config';

// No React plugin: Vite's own transform handles TSX with the automatic JSX runtime.
export default defineConfig({
  base: './',
  build: { outDir: 'dist', target: 'es2022', sourcemap: false, chunkSizeWarningLimit: 600 },
  server: { host: '127.0.0.1' },
  test: { include: ['src/**/*.test.ts'], environment: 'node' },
});

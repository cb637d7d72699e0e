// Vite configuration of the console (built by scripts/console.mjs into console/dist).
// Every file of the build is served by the server at /console/assets/<file> (as upstream's
// --console-assets-dir), so the public base is /console/assets/ and assets sit next to index.html.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/assets/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    assetsDir: '.',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    // the editor chunk (monaco) is large by nature and loaded only on the API explorer page
    chunkSizeWarningLimit: 5000,
    rolldownOptions: {
      // React libraries mark their modules "use client"; meaningless in a client-only bundle
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  worker: { format: 'es' },
});

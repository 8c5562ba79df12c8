// Builds the `perdure dev` web UI into packages/cli/dist/web, which the dev
// server serves. `npm run dev:web` runs Vite's dev server against a running
// `perdure dev` on port 4100 (override with PERDURE_DEV_URL).
import { join } from "node:path";
import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  plugins: [react()],
  // The browser-safe wire types and constants of @perdure/agents/contract/ui-stream
  // come from the package's sources, so a clean clone builds the UI without dist/.
  resolve: { conditions: ["perdure-source", ...defaultClientConditions] },
  build: {
    outDir: join(import.meta.dirname, "../dist/web"),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: { "/api": { target: process.env.PERDURE_DEV_URL ?? "http://127.0.0.1:4100", changeOrigin: false } },
  },
});

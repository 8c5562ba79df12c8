import type { NextConfig } from "next";

const config: NextConfig = {
  // Perdure's packages run in Node.js as they are (node:sqlite, worker leases): load them, do not bundle them.
  serverExternalPackages: ["@perdure/engine", "@perdure/agents"],
  // The repository's `tsc -b` and eslint check this app; the build does not repeat them.
  typescript: { ignoreBuildErrors: true },
  poweredByHeader: false,
};

export default config;

// The console is served by the custom server (server/main.ts); Next builds the pages.
/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  typedRoutes: false,
  // The whole project is type-checked once by `npm run typecheck` (part of
  // `npm test`); the build does not repeat it over server and test files.
  typescript: { ignoreBuildErrors: true },
  experimental: {
    // Turbopack keeps its work in .next/cache for the next build, which a fresh
    // clone in CI never makes: writing it took 35 s of the build there, before
    // the browser tests could start.
    turbopackFileSystemCacheForBuild: !process.env.CI,
  },
};

export default nextConfig;

// How the project bundles a Node program of its own (the server, and the scripts
// the tests start as processes): its sources inlined, npm packages left as imports
// that Node resolves from node_modules.

/** @type {import("esbuild").BuildOptions} */
export const NODE_BUNDLE = { bundle: true, platform: "node", format: "esm", target: "node20", packages: "external" };

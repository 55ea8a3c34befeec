// Types for importing fast-json-patch by its ESM entry. The bare specifier breaks
// under tsx with this repo's tsconfig (allowJs makes tsx load the package's
// shipped index.ts, whose ./src sources are not published), and Node's ESM
// loader cannot see the CommonJS entry's named exports; index.mjs works in tsx,
// Vitest, esbuild and plain Node, but the package ships no .d.mts for it.
declare module "fast-json-patch/index.mjs" {
  export * from "fast-json-patch";
}

// Where to send the operator after logging in: only a path on the console's own
// origin. The target is parsed as browsers parse it (backslashes as slashes,
// tabs and newlines dropped, dot segments resolved), so what is checked is what
// the browser would open.

/** The same-origin path of `target`, or "/" for anything that could leave `origin`. */
export function safeRedirectPath(target: string | null | undefined, origin: string): string {
  if (!target) return "/";
  let url: URL;
  try {
    url = new URL(target, origin);
  } catch {
    return "/";
  }
  if (url.origin !== new URL(origin).origin) return "/";
  const path = `${url.pathname}${url.search}${url.hash}`;
  // "/.//host" resolves to "//host", which a browser reads as another host.
  if (!path.startsWith("/") || path.startsWith("//") || path.startsWith("/\\")) return "/";
  return path;
}

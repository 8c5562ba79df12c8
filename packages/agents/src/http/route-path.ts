/** Matching a request path against the route table's `:name` paths. */

/** A route path split into its segments, once. */
export interface CompiledRoutePath {
  segments: readonly string[];
}

export function compileRoutePath(path: string): CompiledRoutePath {
  return { segments: path.split("/").slice(1) };
}

/**
 * The `:name` values of `pathname` (below the base path, still
 * percent-encoded) when it matches, decoded; null when it does not match.
 * The caller has checked that the whole path decodes.
 */
export function matchRoutePath(compiled: CompiledRoutePath, pathname: string): Record<string, string> | null {
  const segments = pathname.split("/").slice(1);
  if (segments.length !== compiled.segments.length) return null;
  const params: Record<string, string> = {};
  for (const [index, expected] of compiled.segments.entries()) {
    const actual = segments[index] ?? "";
    if (expected.startsWith(":")) {
      if (actual === "") return null;
      params[expected.slice(1)] = decodeURIComponent(actual);
    } else if (expected !== actual) {
      return null;
    }
  }
  return params;
}

/**
 * Who may call `perdure dev`: loopback callers when no access token is set,
 * and only callers that present the token when one is. Checked on every
 * request before anything else is read.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";

/** How `perdure dev` admits callers. */
export interface DevAccess {
  /** The access token every request must carry, or null to admit loopback callers only. */
  token: string | null;
  /** The port, which names the token's cookie: cookies do not tell ports apart. */
  port: number;
}

/** Host names that mean this machine only. */
const loopbackHostNames = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
/** Host names that mean every interface. */
const wildcardHostNames = new Set(["0.0.0.0", "::", "[::]"]);
const loopbackAddresses = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

/** Whether binding to `host` keeps the server on this machine. */
export function isLoopbackHost(host: string): boolean {
  return loopbackHostNames.has(host.toLowerCase());
}

/** Whether a `Host` header value (`name:port`) names this machine only. */
export function isLoopbackHostHeader(hostHeader: string): boolean {
  return /^(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/i.test(hostHeader);
}

/**
 * The `Host` header values a server bound to `host:port` answers to: the
 * loopback names, plus `host` itself; "any" for a wildcard bind, where the
 * access token is the defence against rebinding.
 */
export function allowedHostsFor(host: string, port: number): readonly string[] | "any" {
  if (wildcardHostNames.has(host.toLowerCase())) return "any";
  const names = ["127.0.0.1", "localhost", "[::1]"];
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  if (!isLoopbackHost(host)) names.push(bracketed.toLowerCase());
  return names.flatMap((name) => (port === 80 ? [`${name}:${port}`, name] : [`${name}:${port}`]));
}

/** A new random access token, for a non-loopback bind without `--token`. */
export function generateAccessToken(): string {
  return randomBytes(24).toString("base64url");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Compares in constant time, whatever the lengths. */
export function isSameToken(candidate: string | undefined, token: string): boolean {
  return candidate !== undefined && timingSafeEqual(digest(candidate), digest(token));
}

/** The cookie that carries the token after the first visit with `?token=`. */
export function accessCookieName(port: number): string {
  return `perdure_dev_token_${port}`;
}

function bearerTokenOf(context: Context): string | undefined {
  const header = context.req.header("authorization");
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Where a visit with `?token=` goes next: the same path and query without the
 * token. Leading slashes and backslashes collapse to one slash, so that a
 * visit to `//evil.example/?token=…` stays on this server instead of going to
 * the protocol-relative address `//evil.example/`.
 */
export function sameSiteRedirectTarget(requestUrl: string): string {
  const url = new URL(requestUrl);
  url.searchParams.delete("token");
  return `/${url.pathname.replace(/^[/\\]+/, "")}${url.search}`;
}

/**
 * The access check as Hono middleware. With a token, a request passes with
 * `Authorization: Bearer <token>` or the token's cookie; a page visit with
 * `?token=<token>` sets the cookie (HttpOnly, SameSite=Strict) and redirects
 * to the same address without the token. Without a token, only loopback
 * peers pass.
 */
export function devAccessMiddleware(access: DevAccess): MiddlewareHandler {
  const cookieName = accessCookieName(access.port);
  return async (context, next) => {
    const { token } = access;
    if (token === null) {
      const remoteAddress = getConnInfo(context).remote.address;
      if (remoteAddress === undefined || !loopbackAddresses.has(remoteAddress)) {
        return context.json({ error: `caller ${remoteAddress ?? "unknown"} is not on this machine; bind with --host and use the access token to admit others` }, 403);
      }
      return next();
    }
    if (isSameToken(bearerTokenOf(context), token) || isSameToken(getCookie(context, cookieName), token)) return next();
    const queryToken = context.req.query("token");
    if (context.req.method === "GET" && isSameToken(queryToken, token)) {
      setCookie(context, cookieName, token, { httpOnly: true, sameSite: "Strict", path: "/" });
      return context.redirect(sameSiteRedirectTarget(context.req.url), 302);
    }
    return context.json({ error: "this server needs its access token: open the address perdure dev printed, or send Authorization: Bearer <token>" }, 401);
  };
}

/**
 * The sign-in cookie: the user's name and when it expires, signed with
 * HMAC-SHA-256 under `NEXTJS_CHAT_SECRET`. The example's sign-in takes any
 * name (it stands in for your real sign-in); what matters is that the
 * session API trusts only a name this server signed.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const sessionCookieName = "perdure_chat_user";
/** How long a sign-in lasts. */
export const sessionMaxAgeSeconds = 7 * 24 * 60 * 60;
const userNamePattern = /^[a-z0-9][a-z0-9._-]{0,39}$/;

/** The signing key; refuses to run without one of at least 32 characters. */
function secret(): string {
  const value = process.env["NEXTJS_CHAT_SECRET"] ?? "";
  if (value.length < 32) throw new Error("NEXTJS_CHAT_SECRET must be set to a random string of at least 32 characters (for example: openssl rand -hex 32)");
  return value;
}

function signature(payload: string): Buffer {
  return createHmac("sha256", secret()).update(payload).digest();
}

/** Lower-case letters, digits, ".", "_" and "-", at most 40, or undefined when `name` is not a valid user name. */
export function validUserName(name: string): string | undefined {
  const normalized = name.trim().toLowerCase();
  return userNamePattern.test(normalized) ? normalized : undefined;
}

/** The cookie value for `user`: `<user>.<expiry seconds>.<signature>`. */
export function signSessionCookie(user: string, now = Date.now()): string {
  const payload = `${user}.${Math.floor(now / 1000) + sessionMaxAgeSeconds}`;
  return `${payload}.${signature(payload).toString("base64url")}`;
}

/** The user a cookie value names, or undefined when it is malformed, forged or expired. */
export function verifySessionCookie(value: string | undefined, now = Date.now()): string | undefined {
  const match = /^([a-z0-9._-]+)\.(\d{1,12})\.([\w-]{43})$/.exec(value ?? "");
  if (match === null) return undefined;
  const [, user = "", expires = "", mac = ""] = match;
  const expected = signature(`${user}.${expires}`);
  const presented = Buffer.from(mac, "base64url");
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
  if (Number(expires) * 1000 <= now || validUserName(user) !== user) return undefined;
  return user;
}

/** The value of cookie `name` in a `Cookie` header. */
export function cookieOf(header: string | null, name: string): string | undefined {
  for (const pair of (header ?? "").split(";")) {
    const separator = pair.indexOf("=");
    if (separator > 0 && pair.slice(0, separator).trim() === name) return pair.slice(separator + 1).trim();
  }
  return undefined;
}

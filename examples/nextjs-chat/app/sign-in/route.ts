/**
 * A tiny sign-in standing in for a real one: a form posts a user name, and
 * the answer sets the signed cookie and goes back to the chat.
 */
import { sessionCookieName, sessionMaxAgeSeconds, signSessionCookie, validUserName } from "../../lib/session-cookie.ts";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const maxFormBytes = 4096;

function refuse(status: number, error: string): Response {
  return Response.json({ error }, { status });
}

/** The body as text, or undefined once it passes `maxFormBytes` (read no further). */
async function boundedText(request: Request): Promise<string | undefined> {
  const reader = request.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxFormBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function POST(request: Request): Promise<Response> {
  // A page on another site must not sign the visitor in as someone else.
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== "null" && URL.canParse(origin) && new URL(origin).host !== request.headers.get("host")) return refuse(403, `origin ${JSON.stringify(origin)} may not sign in here`);
  if (origin === "null") return refuse(403, 'origin "null" may not sign in here');
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/.test(contentType)) return refuse(415, `content type ${JSON.stringify(contentType)} is not a URL-encoded form`);
  if (Number(request.headers.get("content-length") ?? "0") > maxFormBytes) return refuse(413, `the sign-in form is larger than ${maxFormBytes} bytes`);
  const text = await boundedText(request);
  if (text === undefined) return refuse(413, `the sign-in form is larger than ${maxFormBytes} bytes`);
  const name = new URLSearchParams(text).get("name");
  const user = name === null ? undefined : validUserName(name);
  if (user === undefined) return refuse(400, `user name ${JSON.stringify(name)} is invalid: use 1 to 40 letters, digits, ".", "_" or "-"`);
  const secure = new URL(request.url).protocol === "https:" ? "; Secure" : "";
  return new Response(null, { status: 303, headers: { location: "/", "set-cookie": `${sessionCookieName}=${signSessionCookie(user)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${sessionMaxAgeSeconds}${secure}` } });
}

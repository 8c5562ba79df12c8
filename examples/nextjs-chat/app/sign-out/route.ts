/** Signs out: clears the cookie and goes back to the sign-in form. */
import { sessionCookieName } from "../../lib/session-cookie.ts";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function POST(): Promise<Response> {
  return new Response(null, { status: 303, headers: { location: "/", "set-cookie": `${sessionCookieName}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0` } });
}

/**
 * The chat, or the sign-in form when the signed cookie is missing or
 * invalid. The page reads the cookie on the server; the API checks it again
 * on every request.
 */
import { cookies } from "next/headers";
import { sessionCookieName, verifySessionCookie } from "../lib/session-cookie.ts";
import { Chat } from "./chat.tsx";

export const dynamic = "force-dynamic";

export default async function Page() {
  const user = verifySessionCookie((await cookies()).get(sessionCookieName)?.value);
  if (user === undefined) {
    return (
      <form className="signin" method="post" action="/sign-in">
        <h1>Sign in</h1>
        <p>Any name will do: this form stands in for your own sign-in.</p>
        <label>
          User name <input name="name" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,39}" autoFocus />
        </label>
        <button type="submit">Sign in</button>
      </form>
    );
  }
  return <Chat user={user} />;
}

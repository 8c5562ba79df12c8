/**
 * The whole session HTTP API in one catch-all route handler: every request
 * under /api goes to the Fetch handler of `@perdure/agents/http`.
 */
import { sessionApi } from "../../../lib/perdure.ts";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

function handle(request: Request): Promise<Response> {
  return sessionApi()(request);
}

export { handle as GET, handle as POST };

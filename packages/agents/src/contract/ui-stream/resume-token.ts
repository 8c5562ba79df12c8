/**
 * The request header a browser sends its latest UI stream resume token in.
 * Tokens can reach 64 KiB, so they travel in a header, not in URLs.
 *
 * @example
 * createAgentUIMessageStreamResponse({ client, flow, flowId, resumeToken: request.headers.get(agentResumeTokenHeaderName) ?? undefined });
 */
export const agentResumeTokenHeaderName = "x-agent-resume-token";

/** The longest UI stream resume token issued or accepted, in characters (64 KiB). */
export const maxAgentUIStreamTokenLength = 65_536;

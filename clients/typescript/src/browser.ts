// The package without webhook verification (which needs node:crypto), for browsers.
export { LeagueClient, newRequestId } from "./client.js";
export type { Answer, BatchResult, CallOptions, ClientOptions, Query, Schemas } from "./client.js";
export { LeagueConnectionError, LeagueError, StreamEndedError } from "./errors.js";
export type { ErrorCode, StreamEndReason } from "./errors.js";
export * from "./events.js";
export type { RetryOptions } from "./retry.js";
export type { BracketStreamOptions, StreamOptions } from "./stream.js";
export type { components, operations, paths } from "./schema.js";

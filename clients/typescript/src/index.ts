// @leaguekit/client: a typed client for leaguekit's HTTP API.
export * from "./browser.js";
export { signWebhook, verifyWebhook, WebhookVerificationError } from "./webhook.js";
export type { VerifyWebhookOptions, WebhookErrorReason } from "./webhook.js";

// @leaguekit/client: a typed client for leaguekit's HTTP API.
export * from "./browser.js";
export {
    signStandardWebhook,
    signWebhook,
    standardWebhookKey,
    verifyStandardWebhook,
    verifyWebhook,
    WebhookVerificationError,
    WHSEC_PREFIX,
} from "./webhook.js";
export type {
    StandardWebhookHeaders,
    VerifyStandardWebhookOptions,
    VerifyWebhookOptions,
    WebhookErrorReason,
    WebhookHeaders,
} from "./webhook.js";

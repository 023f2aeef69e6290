// The HTTP API's types, generated from `leaguekit serve`'s /openapi.json by
// openapi-typescript. Do not edit: run `npm run generate` (see scripts/generate.ts).

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Whether this server can serve: 200 when the store answers (its clock), 503 when it
         *     does not. Needs no token.
         * @description A store that answers but refuses writes (Redis's memory full under `noeviction`) is
         *     still 200, with `"status": "degraded"`, `"code": "store_refuses_writes"` and a
         *     message: reads keep working, and every server of the league shares the store, so a
         *     load balancer that took them out of rotation would end the reads too and fix
         *     nothing. Alerting reads the status (or the `leaguekit_store_refuses_writes` gauge).
         */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /metrics`. */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit log: every operator action with who, when, what and why, oldest first.
         *     Admin tokens only.
         */
        get: operations["audit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/bans": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The bans that hold now, by player (admin). */
        get: operations["bans"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/clock": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The league clock, its staging offset and whether the season travels (admin tokens
         *     only).
         */
        get: operations["clock"];
        put?: never;
        /**
         * Moves the staging clock of every process of the league forward, by a duration
         *     (`{"advance": "1h"}`) or to a time (`{"set": "2026-06-01T00:00:00Z"}`), and records
         *     the move in the audit log (admin tokens only). Refused, writing nothing, in a
         *     season without `[clock] travel = true` (409 `no_staging_clock`) and for a move that
         *     is not forward (400 `clock_not_forward`).
         */
        post: operations["move_clock"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/counts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Players and brackets per tier in a period (every tier listed), with a breakdown per
         *     cohort (`cohorts`) in a season with cohorts. With `cohort`, each tier's numbers are
         *     that cohort's.
         */
        get: operations["counts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/periods": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The current period (by the league clock) and its boundary, the rollover's backlog
         *     and the latest closed periods with their reports.
         */
        get: operations["periods"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/periods/{period}/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every player's final standing and outcome in a closed period, as JSON lines
         *     (`application/x-ndjson`), streamed in a fixed order (tier from lowest, bracket,
         *     rank): the same lines as `leaguekit export`. If the store fails midway the body
         *     ends early without its last newline; fetch it again.
         */
        get: operations["export"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Settles a closed bracket again without the excluded players (an admin token
         *     only): the players below take their places, promotions and rewards, each granted
         *     once; what the excluded players were given is revoked where it can be. Sending it
         *     again changes nothing; more exclusions add to the earlier ones. Audited.
         */
        post: operations["resettle"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The player's tier, bracket, rank and score in a period, and their last closed
         *     period (`last`).
         */
        get: operations["player"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/adjust": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Changes a player's score in the running period by (`by`) or to (`set`) a number,
         *     exactly, and appends it to the audit log (an admin token's name is the actor). The
         *     adjusted score keeps the time its current score was reached; the season's limits do
         *     not apply. Nothing is written when it is refused.
         */
        post: operations["adjust"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/around": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The entries around the player in their bracket: up to `radius` above and below. */
        get: operations["around"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/ban": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Bans the player (admin): their joins and score updates are refused with 403
         *     `banned`, and they leave their running bracket's board at once (the others' ranks
         *     close up); they take no outcome or reward at its close. Banning again replaces
         *     the ban.
         */
        post: operations["ban"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The player's events as server-sent events, following them across periods: their
         *     placements, outcomes, overtakes and corrections (their brackets' logs), the closes
         *     of their brackets and periods, and their rewards granted and claimed. Each is
         *     `event: <type>`, `id: <cursor>`, `data: <Event>`, oldest first; lines starting
         *     with `:` are keep-alives. To resume, send the last id back as `Last-Event-ID` (or
         *     `?last_event_id=`): nothing after it is missed, nothing is sent twice. Without an
         *     id the stream starts from the oldest event kept (`[events] keep`). An `event:
         *     error` (no id) says the store failed a read; the stream goes on. A player token
         *     reads its own player's stream only; a browser's `EventSource` may send its token as
         *     `?access_token=`. A stream opened with a player token ends when that token expires
         *     or its player is banned: an `event: end` (no id, `data`: a `StreamEnd`,
         *     `{"reason": "token_expired" | "banned", "message"}`), then the body ends. Each
         *     client holds a bounded number of streams (429 `too_many_streams` over it), and so
         *     does the server (503 `too_many_streams`). Needs `[events]` in the season (else 404
         *     `events_disabled`).
         */
        get: operations["player_events"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/join": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Places the player in a bracket of their tier (and `cohort`) for the period of `at`
         *     (default now). Joining again returns the same bracket. The answer that placed the
         *     player carries their last result (`last`) and their unclaimed rewards
         *     (`pending_rewards`); later answers for the period carry `null` in both.
         */
        post: operations["join"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The player's profile fields. */
        get: operations["profile"];
        /**
         * Replaces the profile: it becomes exactly the body's fields (only the season's
         *     `profiles.fields`, within `max_bytes`), a JSON object of strings; fields left out
         *     are removed (`{}` clears the profile). One atomic step: a refused body changes
         *     nothing. Answers the whole profile. To change some fields only, use `PATCH`.
         */
        put: operations["set_profile"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Changes some profile fields (a JSON merge patch of strings): a field with a string
         *     sets it, a field with `null` removes it, fields left out are kept. Only the
         *     season's `profiles.fields`, within `max_bytes`. One atomic step: a refused body
         *     changes nothing. Answers the whole profile.
         */
        patch: operations["patch_profile"];
        trace?: never;
    };
    "/v1/players/{player}/rewards": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The player's rewards not yet claimed. */
        get: operations["rewards"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/rewards:claim": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Claims every pending reward. With a `request_id`, a repeated claim returns the same
         *     grants and grants nothing new.
         */
        post: operations["claim"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/scores": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submits a score value (a delta, a best or a new score, by the season's mode). A
         *     `request_id` makes it idempotent: a resend with the same id and `at` answers like
         *     the first time with `applied: false`. On 503 `unknown` the update may or may not
         *     have been applied: resend it only with its request id.
         */
        post: operations["submit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A short-lived token for one player's game client (a JWT, HS256): with it the
         *     client reads only its own player (view, around, rewards), the season, and its own
         *     bracket's standings and live standings in the running period. Needs a server or
         *     admin token, and `LEAGUEKIT_PLAYER_TOKEN_SECRET` on the server (else 404
         *     `player_tokens_disabled`). A banned player gets no token while the ban holds (403
         *     `banned`). docs/http.md, "Player tokens", has the claims, to mint tokens in the
         *     game server's own code instead.
         */
        post: operations["mint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/players/{player}/unban": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Lifts the player's ban (admin): they may join again. In a period they were placed
         *     in, joining again puts them back on the same board with no score.
         */
        post: operations["unban"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/scores:batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submits many updates (a JSON array of
         *     `{"player","value","request_id"?,"at"?,"rank"?,"cohort"?}`) in
         *     one pipelined round trip to the store. The answer has exactly one result per item,
         *     in order: `applied`/`duplicate` with the submission, `refused` (nothing written) or
         *     `unknown` (resend only with its request id) with `error`. The status is 200
         *     whenever the body was a JSON array within the limits, whatever the items' results.
         */
        post: operations["batch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/season": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The season's rules: tiers (lowest first) with their quotas and rewards, bracket
         *     size, scoring, profile fields and schedule.
         */
        get: operations["season"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tiers/{tier}/brackets/{bracket}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A page of a bracket's standings, best first, with cached profiles. With `cohort`,
         *     the cohort's brackets of the tier.
         */
        get: operations["standings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tiers/{tier}/brackets/{bracket}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The bracket's standings as server-sent events: a `standings` event (the JSON of
         *     `GET /v1/tiers/{tier}/brackets/{bracket}`) at once and after every change, within
         *     about half a second of a write by any process (at once for writes through this
         *     server); an `error` event (`{"error"}`) while the store fails. Without `period` the
         *     stream follows the current period across boundaries. It ends when the server
         *     shuts down; reconnect then.
         * @description With `[events]` in the season, the stream also carries the bracket's log events
         *     (`event: <type>`, `id: <cursor>`, `data: <Event>`): from the oldest kept, or after
         *     the id sent back as `Last-Event-ID` (or `?last_event_id=`); without `period`, those
         *     of the running period and the one before (whose close comes after the boundary).
         *     `standings` and `error` events have no id. A browser's `EventSource` may send its
         *     token as `?access_token=`.
         *
         *     A stream opened with a player token ends when that token expires or its player is
         *     banned: an `event: end` (no id, `data`: a `StreamEnd`, `{"reason": "token_expired" |
         *     "banned", "message"}`), then the body ends. Each client holds a bounded number of
         *     streams (429 `too_many_streams` over it), and so does the server (503
         *     `too_many_streams`).
         */
        get: operations["events"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tiers/{tier}/top": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The best players of a whole tier in a period, across its brackets (or one
         *     cohort's with `cohort`), each with their bracket and cached profile. Ties order as
         *     inside a bracket. A closed period's list is the one frozen at its rollover
         *     (`frozen: true`); the running period's is at most a few seconds old.
         */
        get: operations["top"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/dead": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The webhook dead letters: events given up after every attempt, per URL, in the
         *     order they were recorded, a page at a time. Admin tokens only.
         */
        get: operations["dead"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/dead:replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Marks webhook dead letters for replay (an admin token only): `{"ids": [...]}` or
         *     `{"all": true}`, with a reason. The deliverers send each marked letter again
         *     within about 5 s and remove it once delivered. Audited.
         */
        post: operations["replay"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description Body of an adjustment: exactly one of `by` and `set`, and the reason. */
        AdjustIn: {
            /**
             * Format: int64
             * @description Add this (may be negative) to the score.
             */
            by?: number | null;
            /** @description Why, kept in the audit log (and shown with corrected outcomes): 1-500 characters, not only spaces, no control characters. */
            reason: string;
            /**
             * Format: int64
             * @description Set the score to this.
             */
            set?: number | null;
        };
        /**
         * @description An adjustment made: the player's bracket in the running period, and the score
         *     before and after.
         */
        AdjustOut: {
            /** Format: int64 */
            after: number;
            /** Format: int64 */
            before: number;
            /** Format: int32 */
            bracket: number;
            /** @description In a season with cohorts. */
            cohort?: string | null;
            /** Format: int64 */
            period: number;
            player: string;
            tier: string;
        };
        /** @description One operator action. */
        AuditEntryOut: {
            /** @description What: `ban`, `unban`, `adjust`, `resettle`, `clock`. */
            action: string;
            /** @description Who: the admin token's name, or `cli:<user>`. */
            actor: string;
            /**
             * @description When, by the league clock (RFC 3339): ahead of `recorded_at` on a staging
             *     league whose clock was moved.
             */
            at: string;
            /** @description The action's particulars. */
            details: Record<string, never>;
            /** @description Unique id of the entry. */
            id: string;
            /** @description The player acted on, if one. */
            player?: string | null;
            /** @description Why, as the operator said. */
            reason?: string | null;
            /**
             * @description When it was recorded, by the real clock (RFC 3339); the log keeps an entry
             *     `[audit] keep` (400 days) by this clock.
             */
            recorded_at: string;
        };
        /** @description The audit log's entries, oldest first. */
        AuditOut: {
            entries: components["schemas"]["AuditEntryOut"][];
        };
        /** @description Body of a ban. */
        BanIn: {
            /** @description Why, kept in the audit log (and shown with corrected outcomes): 1-500 characters, not only spaces, no control characters. */
            reason: string;
            /**
             * Format: date-time
             * @description When the ban ends, RFC 3339 by the league clock (default: when lifted).
             */
            until?: string | null;
        };
        /** @description A player's ban. */
        BanOut: {
            /** @description Who banned them (an admin token's name, or `cli:<user>`). */
            actor: string;
            /** @description The banned player. */
            player: string;
            /** @description Why. */
            reason: string;
            /**
             * Format: date-time
             * @description When, by the league clock.
             */
            since: string;
            /**
             * Format: date-time
             * @description When it ends; `null`: when lifted.
             */
            until?: string | null;
        };
        /** @description The bans that hold now. */
        BansOut: {
            /** @description By player. */
            bans: components["schemas"]["BanOut"][];
        };
        /** @description A batch item that was applied, or was a duplicate: the submission's fields. */
        BatchItemDone: {
            /** @description False when the request id had been seen: nothing changed. */
            applied: boolean;
            /** Format: int32 */
            bracket: number;
            /** @description The player's cohort for the period (absent without one). */
            cohort?: string | null;
            last?: null | components["schemas"]["LastOut"];
            /**
             * @description When this score placed the player in the period: their rewards not yet
             *     claimed; otherwise `null`.
             */
            pending_rewards?: components["schemas"]["RewardOut"][] | null;
            /** Format: int64 */
            period: number;
            player: string;
            /**
             * Format: int64
             * @description 1-based rank after the update; absent when the update was sent with
             *     `"rank": false` (for a repeated request id: when the first one was).
             */
            rank?: number | null;
            /**
             * Format: int64
             * @description The score after the update (for a repeated request id: after the first one).
             */
            score: number;
            tier: string;
        } & {
            status: components["schemas"]["DoneStatus"];
        } & {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            status: "applied" | "duplicate";
        };
        /** @description A batch item that was refused, or whose outcome is unknown. */
        BatchItemFailed: {
            error: components["schemas"]["ErrorDetail"];
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            status: "refused" | "unknown";
        };
        /** @description One item of a batch. */
        BatchItemIn: {
            /**
             * Format: date-time
             * @description Event time, RFC 3339.
             */
            at?: string | null;
            /** @description Cohort of the placement a first score makes (see the join's `cohort`). */
            cohort?: string | null;
            /** @description The player: 1-64 bytes of UTF-8 without control characters. */
            player: string;
            /** @description `false` leaves `rank` out of the item's answer (see the single update). */
            rank?: boolean;
            /** @description Idempotency key (see the single update), 1-128 bytes. */
            request_id?: string | null;
            /**
             * Format: int64
             * @description The value (see the single update).
             */
            value: number;
        };
        /** @description One result of a batch, in the position of its item, by `status`. */
        BatchItemOut: components["schemas"]["BatchItemDone"] | components["schemas"]["BatchItemFailed"];
        /** @description A bracket the rollover cannot close. */
        BlockedBracketOut: {
            /** @description `period/tier/bracket`. */
            bracket: string;
            /** @description Why, and what to do. */
            error: string;
            /** @description The key in the way. */
            key: string;
        };
        /**
         * @description One server-sent event of a bracket's stream: a `standings` snapshot (no `id`), an
         *     `error` (no `id`), with `[events]` a log event of the bracket (with its `id`), or,
         *     on a stream opened with a player token, its `end` (no `id`).
         */
        BracketStreamEvent: components["schemas"]["StandingsEvent"] | components["schemas"]["LogEvent"] | components["schemas"]["EndEvent"];
        /** @description Body of a claim (optional). */
        ClaimIn: {
            /** @description Makes the claim idempotent: a repeat returns the same grants. 1-128 bytes. */
            request_id?: string | null;
        };
        /** @description What a claim granted. */
        ClaimOut: {
            granted: components["schemas"]["RewardOut"][];
            player: string;
        };
        /** @description A move of the staging clock: exactly one of `advance` and `set`. */
        ClockIn: {
            /**
             * @description Move the clock forward by this duration: a whole number followed by `ms`, `s`,
             *     `m`, `h` or `d` (`90s`, `15m`, `1h`, `3d`).
             */
            advance?: string | null;
            /** @description Why, kept in the audit log (and shown with corrected outcomes): 1-500 characters, not only spaces, no control characters. */
            reason?: string | null;
            /**
             * Format: date-time
             * @description Move the clock to this time (RFC 3339), after the league clock's now.
             */
            set?: string | null;
        };
        /** @description The league clock: `GET /v1/clock`, and the answer of a move. */
        ClockOut: {
            /** @description The league clock now (RFC 3339), with the staging offset. */
            now: string;
            /**
             * Format: int64
             * @description Milliseconds the staging clock adds to the store's clock (0 without travel).
             */
            offset_ms: number;
            /** @description Whether the season has a staging clock (`[clock] travel = true`). */
            travel: boolean;
        };
        /** @description Players and brackets of one cohort of a tier. */
        CohortCountOut: {
            /** Format: int64 */
            brackets: number;
            /** @description The cohort (`null`: players placed without one). */
            cohort?: string | null;
            /** Format: int64 */
            players: number;
        };
        /** @description Players and brackets per tier in a period. */
        CountsOut: {
            /** Format: int64 */
            period: number;
            tiers: components["schemas"]["TierCountOut"][];
        };
        /** @description An event that could not be delivered to one URL. */
        DeadLetterOut: {
            /**
             * Format: date-time
             * @description When it was given up, or its last replay failed (RFC 3339).
             */
            at: string;
            /**
             * Format: int32
             * @description Attempts made, replays included.
             */
            attempts: number;
            /** @description The last attempt's failure (`HTTP 500`, `no answer in 10000 ms`, ...). */
            error: string;
            /** @description The event JSON, as sent (a string). */
            event: string;
            /** @description The event's id (`Leaguekit-Event-Id`). */
            id: string;
            /** @description Marked for replay and not yet delivered. */
            replay: boolean;
            /** @description The URL it failed at. */
            url: string;
        };
        /** @description A page of dead letters. */
        DeadLettersOut: {
            /** @description In the order they were recorded, oldest first. */
            dead: components["schemas"]["DeadLetterOut"][];
            /** @description Give it as `after` for the next page; null on the last page. */
            next: string | null;
        };
        /**
         * @description `applied` (the update changed the score) or `duplicate` (its request id had been
         *     seen: nothing changed, the answer is the first one's).
         * @enum {string}
         */
        DoneStatus: "applied" | "duplicate";
        /**
         * @description A stream's `event: end` (no `id`), the last event of a stream opened with a player
         *     token: the server ends the stream when that token expires or its player is banned,
         *     and the body ends after it. Do not reconnect as after a drop: with the same token
         *     the stream is refused (401 `token_expired`, 403 `banned`).
         */
        EndEvent: {
            /** @description JSON: a `StreamEnd` (`{"reason", "message"}`). */
            data: string;
            event: components["schemas"]["EndEventName"];
        };
        /**
         * @description The name of a stream's end event.
         * @enum {string}
         */
        EndEventName: "end";
        /** @description The JSON body of an error. */
        ErrorBody: {
            /** @description The error. */
            error: components["schemas"]["ErrorDetail"];
        };
        /**
         * @description Every error code the service answers (docs/http.md says when each is given). A
         *     client should treat a code it does not know by its HTTP status.
         * @enum {string}
         */
        ErrorCode: "invalid_json" | "invalid_player" | "invalid_request_id" | "score_out_of_range" | "invalid_time" | "before_season" | "outside_calendar" | "future_time" | "unknown_profile_field" | "profile_too_large" | "bad_bracket" | "bad_limit" | "ban_in_past" | "bad_request" | "unauthorized" | "forbidden" | "banned" | "not_found" | "unknown_tier" | "unknown_period" | "unknown_player" | "not_placed" | "expired" | "method_not_allowed" | "body_timeout" | "period_closed" | "period_open" | "not_joined" | "placed_later" | "not_started" | "still_closing" | "payload_too_large" | "too_many_items" | "internal" | "store_unreachable" | "unknown" | "store_unavailable" | "timeout" | "store_full" | "too_many_streams" | "shutting_down" | "unknown_cohort" | "clock_not_forward" | "clock_too_far" | "no_staging_clock" | "staging_mismatch" | "unknown_bracket" | "bracket_not_closed" | "no_exclusions" | "not_in_bracket" | "excludes_everyone" | "limit_exceeded" | "rate_limited" | "token_expired" | "player_tokens_disabled" | "ttl_out_of_range" | "invalid_event_id" | "events_disabled";
        /** @description The `error` object. */
        ErrorDetail: {
            /**
             * Format: date-time
             * @description For `unknown` on a score update: the event time (RFC 3339) the update carried
             *     (the one sent, or the server's clock when none was): resend it with the same
             *     `request_id` and this `at`.
             */
            at?: string | null;
            /** @description A stable, machine-readable code, such as `period_closed` or `unknown`. */
            code: components["schemas"]["ErrorCode"];
            /** @description What was wrong and what to do. */
            message: string;
            /**
             * Format: int64
             * @description For `not_started`, `still_closing`, `rate_limited`, `store_unreachable` and
             *     `too_many_streams`: how long to wait, in milliseconds.
             */
            retry_after_ms?: number | null;
        };
        /**
         * @description A stream's `event: error` (no `id`): the store failed to answer a read; the stream
         *     goes on and reads again.
         */
        ErrorEvent: {
            /** @description JSON: an `ErrorBody`. */
            data: string;
            event: components["schemas"]["ErrorEventName"];
        };
        /**
         * @description The name of a stream's error event.
         * @enum {string}
         */
        ErrorEventName: "error";
        /**
         * @description A league event: the same JSON in a webhook's body and a stream's `data:`. `data`
         *     depends on `type` (docs/http.md, "Live events", lists each). Clients must accept
         *     types and fields they do not know.
         */
        Event: {
            /**
             * Format: int64
             * @description When, unix milliseconds by the league clock.
             */
            at: number;
            /**
             * Format: int32
             * @description The bracket it is about, if one.
             */
            bracket?: number | null;
            /** @description The type's own fields. */
            data: Record<string, never>;
            /** @description Unique in the league: the key to deduplicate by. */
            id: string;
            /**
             * Format: int64
             * @description The period it belongs to.
             */
            period: number;
            /** @description The player it is about, if one. */
            player?: string | null;
            /** @description The season's name. */
            season: string;
            /** @description The tier it is about, if one. */
            tier?: string | null;
            /** @description The event's type (see `EventType`; others may come). */
            type: components["schemas"]["EventType"];
        };
        /**
         * @description An event's type. Clients must accept types this list does not have yet (treat
         *     them as a plain `Event`), and fields they do not know.
         * @enum {string}
         */
        EventType: "player.placed" | "player.overtaken" | "bracket.closed" | "player.promoted" | "player.demoted" | "player.stayed" | "reward.granted" | "reward.claimed" | "period.closed" | "score.adjusted" | "player.resettled";
        /** @description One line of a period's export (JSON lines). */
        ExportLine: {
            /** Format: int32 */
            bracket: number;
            /** @description The cohort played in (absent without one). */
            cohort?: string | null;
            /** @description Present (`true`) when a re-settlement corrected this outcome after the close. */
            corrected?: boolean | null;
            next_tier: string;
            /** @description `promoted`, `stayed` or `demoted`. */
            outcome: components["schemas"]["Outcome"];
            /** Format: int64 */
            period: number;
            player: string;
            /** Format: int64 */
            rank: number;
            /** @description Why: the reason of the re-settlement that last changed it (with `corrected`). */
            reason?: string | null;
            reward?: string | null;
            /** Format: int64 */
            score: number;
            tier: string;
        };
        /**
         * @description `refused` (nothing was written) or `unknown` (the store failed after the update may
         *     have been applied: resend it only with its request id and `at`).
         * @enum {string}
         */
        FailedStatus: "refused" | "unknown";
        /** @description `GET /healthz`. */
        HealthOut: {
            /** @description With `degraded`: `store_refuses_writes`. */
            code?: string | null;
            /** @description With `degraded`: why the store refuses writes, and what to do. */
            message?: string | null;
            /** @description `ok`, or `degraded` while the store refuses writes (reads keep working). */
            status: components["schemas"]["HealthStatus"];
        };
        /**
         * @description `ok`, or `degraded` while the store refuses writes.
         * @enum {string}
         */
        HealthStatus: "ok" | "degraded";
        /** @description Body of a join (optional). */
        JoinIn: {
            /**
             * Format: date-time
             * @description Event time, RFC 3339 (default: now by the league clock).
             */
            at?: string | null;
            /**
             * @description Cohort to be placed in (a label of the season's `[cohorts]`); defaults to the
             *     player's last cohort. Ignored once the player is placed in the period.
             */
            cohort?: string | null;
        };
        /**
         * @description The season's `brackets.join`: what places a player in a bracket.
         * @enum {string}
         */
        JoinPolicy: "on_first_score" | "explicit";
        /** @description A player's last closed period. */
        LastOut: {
            /** Format: int32 */
            bracket: number;
            /** @description The cohort played in (absent without one). */
            cohort?: string | null;
            next_tier: string;
            /** @description `promoted`, `stayed` or `demoted`. */
            outcome: components["schemas"]["Outcome"];
            /** Format: int64 */
            period: number;
            /** Format: int64 */
            rank: number;
            reward?: string | null;
            /** Format: int64 */
            score: number;
            tier: string;
        };
        /**
         * @description One server-sent event of the event log (as OpenAPI 3.2 reads a `text/event-stream`
         *     schema: one object per event). `event` is the event's type, `id` the cursor to
         *     resume after it (`Last-Event-ID`), `data` the `Event` as JSON.
         */
        LogEvent: {
            /** @description JSON: an `Event`. */
            data: string;
            event: components["schemas"]["EventType"];
            /** @description Opaque: send it back as `Last-Event-ID` to resume after this event. */
            id: string;
        };
        /**
         * @description A player's move when a period closed.
         * @enum {string}
         */
        Outcome: "promoted" | "stayed" | "demoted";
        /** @description A player's outcome in the bracket, before or after the re-settlement. */
        OutcomeSummaryOut: {
            next_tier: string;
            /** @description `promoted`, `stayed` or `demoted`. */
            outcome: components["schemas"]["Outcome"];
            /** Format: int64 */
            rank: number;
            reward?: string | null;
        };
        /** @description A period of the calendar. */
        PeriodOut: {
            /**
             * Format: date-time
             * @description When it stops accepting events and may be closed: its end plus `max_skew`.
             */
            closes_at: string;
            /** Format: date-time */
            end: string;
            /** Format: int64 */
            id: number;
            /** Format: date-time */
            start: string;
        };
        /** @description The report of a closed period: totals, and the same figures per tier. */
        PeriodReportOut: components["schemas"]["TallyOut"] & {
            /** Format: int64 */
            brackets: number;
            /** Format: int64 */
            period: number;
            tiers: {
                [key: string]: components["schemas"]["TallyOut"];
            };
        };
        /** @description The league's time: the current period, the next boundary, and the rollover. */
        PeriodsOut: {
            /**
             * @description Brackets the rollover cannot close: a key of the wrong type in them (repair
             *     or delete it; every rollover retries them).
             */
            blocked_brackets: components["schemas"]["BlockedBracketOut"][];
            /**
             * Format: int64
             * @description Rewards whose grant keeps failing (see `leaguekit rollover`).
             */
            blocked_rewards: number;
            /** @description The latest closed periods with their reports, newest first. */
            closed: components["schemas"]["PeriodReportOut"][];
            /**
             * Format: int64
             * @description Every period up to this one is closed (0: none yet).
             */
            closed_through: number;
            current?: null | components["schemas"]["PeriodOut"];
            /**
             * Format: date-time
             * @description The next period boundary: the current period's end (or the season's start).
             */
            next_boundary?: string | null;
            /**
             * Format: date-time
             * @description The league clock (Redis's), when this answer was made.
             */
            now: string;
            /** @description Periods that have ended but are not closed yet: the rollover's backlog. */
            pending: number[];
            season: string;
        };
        /** @description Where a player is placed. */
        PlacementOut: {
            /** Format: int32 */
            bracket: number;
            /** @description The cohort the player is placed in for the period (absent without one). */
            cohort?: string | null;
            last?: null | components["schemas"]["LastOut"];
            /**
             * @description On the answer that placed the player in this period: their rewards not yet
             *     claimed. `null` on every later answer.
             */
            pending_rewards?: components["schemas"]["RewardOut"][] | null;
            /** Format: int64 */
            period: number;
            player: string;
            tier: string;
        };
        /** @description What a re-settlement changed for one player. */
        PlayerCorrectionOut: {
            /** @description Their outcome now. */
            after: components["schemas"]["OutcomeSummaryOut"];
            /** @description Their outcome as the bracket closed. */
            before: components["schemas"]["OutcomeSummaryOut"];
            /** @description Whether the player is excluded. */
            excluded: boolean;
            /** @description Rewards the corrections grant them (each once). */
            granted: components["schemas"]["RewardOut"][];
            /** @description What they were given and cannot be taken back. */
            not_revocable: string[];
            player: string;
            /** @description Rewards taken back (they were still pending). */
            revoked: components["schemas"]["RewardOut"][];
            /**
             * @description Promotions that reach them from a later period (they were already placed in
             *     the next one).
             */
            tier_credits: components["schemas"]["TierCreditOut"][];
        };
        /** @description A player's placement, rank and score in a period, and their last closed period. */
        PlayerOut: {
            /** Format: int32 */
            bracket?: number | null;
            /** @description Their cohort, if placed in one. */
            cohort?: string | null;
            last?: null | components["schemas"]["LastOut"];
            /** Format: int64 */
            period: number;
            player: string;
            /** Format: int64 */
            rank?: number | null;
            /** Format: int64 */
            score?: number | null;
            /** @description The tier they are placed in, or would join next. */
            tier: string;
        };
        /** @description One server-sent event of a player's stream: a log event, an error, or the end. */
        PlayerStreamEvent: components["schemas"]["LogEvent"] | components["schemas"]["ErrorEvent"] | components["schemas"]["EndEvent"];
        /** @description A player's profile. */
        ProfileOut: {
            player: string;
            profile: {
                [key: string]: string;
            };
        };
        /** @description Body of a replay: `ids` or `all`, and why. */
        ReplayIn: {
            /** @description Replay every dead letter. */
            all?: boolean | null;
            /** @description The event ids to replay (each listed by `GET /v1/webhooks/dead`). */
            ids?: string[] | null;
            /** @description Why, kept in the audit log (and shown with corrected outcomes): 1-500 characters, not only spaces, no control characters. */
            reason?: string;
        };
        /** @description The letters marked for replay. */
        ReplayOut: {
            /** @description The letters marked (the first 1000). */
            dead: components["schemas"]["DeadLetterOut"][];
            /**
             * Format: int64
             * @description How many letters were marked: each is sent again within about 5 s and removed
             *     once delivered; one that fails again stays, unmarked, with its new error.
             */
            marked: number;
        };
        /** @description Body of a re-settlement. */
        ResettleIn: {
            /** @description The players to exclude (at least one; earlier re-settlements' exclusions stay). */
            exclude?: string[];
            /** @description Why, kept in the audit log (and shown with corrected outcomes): 1-500 characters, not only spaces, no control characters. */
            reason?: string;
        };
        /** @description What a re-settlement did (the same as `leaguekit resettle` prints). */
        ResettleOut: {
            /** Format: int32 */
            bracket: number;
            /**
             * @description Whether this request excluded a player not excluded before (`false`: nothing
             *     changed).
             */
            changed: boolean;
            /** @description Every player excluded so far, sorted. */
            excluded: string[];
            /**
             * Format: int64
             * @description Rewards this request granted (0 when they had been granted already).
             */
            granted_now: number;
            /** Format: int64 */
            period: number;
            /** @description Every player whose outcome differs from the one the bracket closed with. */
            players: components["schemas"]["PlayerCorrectionOut"][];
            tier: string;
            /**
             * Format: int64
             * @description The bracket's correction version (one more each time its exclusions grew).
             */
            version: number;
        };
        /** @description A reward. */
        RewardOut: {
            /** @description The grant string from the season. */
            grant: string;
            /** @description Where it was earned: `period/tier/bracket`. */
            source: string;
        };
        /** @description A reward rule of a tier. */
        RewardRuleOut: {
            /** Format: int32 */
            first: number;
            grant: string;
            /** Format: int32 */
            last: number;
        };
        /** @description A player's pending rewards. */
        RewardsOut: {
            player: string;
            rewards: components["schemas"]["RewardOut"][];
        };
        /**
         * @description The season's `scoring.mode`: how a value changes a score.
         * @enum {string}
         */
        ScoringMode: "increment" | "best" | "set";
        /** @description The season's rules, as the dashboard shows them. */
        SeasonOut: {
            /** Format: int32 */
            bracket_size: number;
            /**
             * Format: int64
             * @description With `travel`: milliseconds the staging clock adds to the store's clock (absent
             *     without travel, or when the store could not be read).
             */
            clock_offset_ms?: number | null;
            /**
             * Format: int32
             * @description With reserved late seats: players a bracket takes before the late point
             *     (absent without late seats).
             */
            early_cap?: number | null;
            /** @description `on_first_score` or `explicit`. */
            join: components["schemas"]["JoinPolicy"];
            /**
             * @description With reserved late seats: the late point, `60%` of the period or a time after
             *     its start such as `4d` (absent without late seats).
             */
            late_after?: string | null;
            /** Format: int64 */
            max_score: number;
            /** Format: int64 */
            max_skew_ms: number;
            /** @description `increment`, `best` or `set`. */
            mode: components["schemas"]["ScoringMode"];
            name: string;
            /** @description `daily`, `weekly` or a cron expression. */
            period: string;
            profile_fields: string[];
            /** @description The ladder, lowest first. */
            tiers: components["schemas"]["TierOut"][];
            timezone: string;
            /**
             * @description Whether the season has a staging clock (`[clock] travel = true`): operators move
             *     its league clock forward (`POST /v1/clock`). Never on a live league.
             */
            travel: boolean;
        };
        /** @description One row of standings. */
        StandingOut: {
            player: string;
            /** @description The cached profile fields (an empty object when none are set). */
            profile: {
                [key: string]: string;
            };
            /** Format: int64 */
            rank: number;
            /** Format: int64 */
            score: number;
        };
        /**
         * @description One server-sent event of the live standings (as OpenAPI 3.2 reads a
         *     `text/event-stream` schema: one object per event, with its fields). `event:
         *     standings` carries a `StandingsOut`, `event: error` an `ErrorBody`, as JSON in
         *     `data`.
         */
        StandingsEvent: {
            /** @description JSON: a `StandingsOut`, or an `ErrorBody` for `error`. */
            data: string;
            event: components["schemas"]["StandingsEventName"];
        };
        /**
         * @description The name of a live standings event.
         * @enum {string}
         */
        StandingsEventName: "standings" | "error";
        /** @description A page of a bracket's standings, best first. */
        StandingsOut: {
            /** Format: int32 */
            bracket: number;
            /** @description The cohort whose brackets these are (absent without one). */
            cohort?: string | null;
            entries: components["schemas"]["StandingOut"][];
            /** Format: int64 */
            period: number;
            /**
             * Format: int64
             * @description Players in the bracket.
             */
            players: number;
            tier: string;
        };
        /** @description The `data` of a stream's `event: end`. */
        StreamEnd: {
            /** @description What happened and what to do, for people. */
            message: string;
            /** @description Why the stream ended. */
            reason: components["schemas"]["StreamEndReason"];
        };
        /**
         * @description Why the server ended a stream: `token_expired` (the player token it was opened
         *     with expired: mint a new one and open the stream again with the last id received)
         *     or `banned` (the player was banned). Clients must accept reasons this list does not
         *     have yet, and treat them as an end all the same.
         * @enum {string}
         */
        StreamEndReason: "token_expired" | "banned";
        /** @description The answer to a score update. */
        SubmissionOut: {
            /** @description False when the request id had been seen: nothing changed. */
            applied: boolean;
            /** Format: int32 */
            bracket: number;
            /** @description The player's cohort for the period (absent without one). */
            cohort?: string | null;
            last?: null | components["schemas"]["LastOut"];
            /**
             * @description When this score placed the player in the period: their rewards not yet
             *     claimed; otherwise `null`.
             */
            pending_rewards?: components["schemas"]["RewardOut"][] | null;
            /** Format: int64 */
            period: number;
            player: string;
            /**
             * Format: int64
             * @description 1-based rank after the update; absent when the update was sent with
             *     `"rank": false` (for a repeated request id: when the first one was).
             */
            rank?: number | null;
            /**
             * Format: int64
             * @description The score after the update (for a repeated request id: after the first one).
             */
            score: number;
            tier: string;
        };
        /** @description Body of a score update. */
        SubmitIn: {
            /**
             * Format: date-time
             * @description Event time, RFC 3339 (default: now by the league clock).
             */
            at?: string | null;
            /** @description Cohort of the placement a first score makes (see the join's `cohort`). */
            cohort?: string | null;
            /**
             * @description `false` leaves `rank` out of the answer, which saves the store a scan of the
             *     bracket's board (a few per cent of an update's Redis time). Default `true`.
             */
            rank?: boolean;
            /**
             * @description Makes the update idempotent: a resend with the same id (and the same `at`)
             *     changes nothing and answers like the first. 1-128 bytes.
             */
            request_id?: string | null;
            /**
             * Format: int64
             * @description A delta, a best or a new score, by the season's `scoring.mode`. No season allows
             *     more than 2^53 - 1; the season's own bound is `max_score` (`GET /v1/season`).
             */
            value: number;
        };
        /** @description What a rollover did to some players. */
        TallyOut: {
            /** Format: int64 */
            demoted: number;
            /** Format: int64 */
            idle: number;
            /** Format: int64 */
            players: number;
            /** Format: int64 */
            promoted: number;
            /** Format: int64 */
            rewards: number;
            /** Format: int64 */
            stayed: number;
        };
        /** @description Players and brackets of one tier. */
        TierCountOut: {
            /** Format: int64 */
            brackets: number;
            /**
             * @description Per cohort, in label order (absent in a season without cohorts); players
             *     placed without a cohort are under `cohort: null`.
             */
            cohorts?: components["schemas"]["CohortCountOut"][];
            /** Format: int64 */
            players: number;
            tier: string;
        };
        /** @description Tiers a player gains at their placement in or after `from_period`. */
        TierCreditOut: {
            /** Format: int64 */
            from_period: number;
            /** Format: int64 */
            steps: number;
        };
        /** @description A tier of the ladder. */
        TierOut: {
            demote: string;
            /**
             * Format: int32
             * @description A bracket that closes with fewer active players demotes nobody (0: no minimum).
             */
            min_players: number;
            name: string;
            /** @description A count (`"20"`) or a percentage (`"10%"`). */
            promote: string;
            rewards: components["schemas"]["RewardRuleOut"][];
            /**
             * @description Of what the percentages are taken: `players` (the bracket's actual players) or
             *     `size` (the bracket size, however many joined).
             */
            zones: components["schemas"]["Zones"];
        };
        /** @description The body of a token request (optional: `{}` or none). */
        TokenIn: {
            /**
             * Format: int64
             * @description How long the token lasts, in seconds: from 60 to the server's maximum
             *     (`LEAGUEKIT_PLAYER_TOKEN_MAX_TTL`, default 86400; this document's `maximum`);
             *     default 900, or the maximum if lower. Wins over the query's `ttl`.
             */
            ttl?: number | null;
        };
        /** @description A player token. */
        TokenOut: {
            /**
             * Format: date-time
             * @description When it expires (RFC 3339; its `exp`).
             */
            expires_at: string;
            /** @description The player it is for (its `sub`). */
            player: string;
            /** @description The token: send it as `Authorization: Bearer TOKEN`. */
            token: string;
        };
        /** @description One entry of a tier's top. */
        TopEntryOut: {
            /**
             * Format: int32
             * @description Their bracket (within their cohort).
             */
            bracket: number;
            /** @description Their cohort (absent without one). */
            cohort?: string | null;
            player: string;
            /** @description Their cached profile (`{}` if none). */
            profile: Record<string, never>;
            /**
             * Format: int64
             * @description 1-based rank in the tier (or its cohort).
             */
            rank: number;
            /** Format: int64 */
            score: number;
        };
        /** @description The best players of a whole tier in a period, across its brackets. */
        TopOut: {
            /**
             * Format: int64
             * @description Brackets in the tier (or its cohort).
             */
            brackets: number;
            /** @description The cohort the list is of (absent: the whole tier, across cohorts). */
            cohort?: string | null;
            /** @description The entries, best first. */
            entries: components["schemas"]["TopEntryOut"][];
            /** @description True for a closed period's list, frozen at its rollover. */
            frozen: boolean;
            /** Format: int64 */
            period: number;
            tier: string;
        };
        /** @description Body of an unban (optional). */
        UnbanIn: {
            /** @description Why, kept in the audit log (and shown with corrected outcomes): 1-500 characters, not only spaces, no control characters. */
            reason?: string | null;
        };
        /** @description The answer of an unban. */
        UnbanOut: {
            lifted?: null | components["schemas"]["BanOut"];
            /** @description The player. */
            player: string;
        };
        /**
         * @description A tier's `zones`: of what its percentage quotas are taken.
         * @enum {string}
         */
        Zones: "players" | "size";
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description ok, or degraded: the store refuses writes, reads work */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthOut"];
                };
            };
            /** @description store_unavailable */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The Prometheus text format */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Another metrics recorder is installed */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The store failed or was too slow (timeout; for a write, unknown) */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    audit: {
        parameters: {
            query?: {
                /** @description Only actions about this player. */
                player?: string;
                /**
                 * @description Only actions recorded at or after this time (RFC 3339, the real clock:
                 *     `recorded_at`).
                 */
                since?: string;
                /** @description At most this many entries, 1-1000 (default 1000). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    bans: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BansOut"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: not an admin token */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    clock: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClockOut"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a server or viewer token (admin tokens only) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    move_clock: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ClockIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClockOut"];
                };
            };
            /** @description invalid_json, invalid_time, bad_request (not exactly one of advance and set, or a duration that cannot be read), clock_not_forward; nothing was written */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a server or viewer token (admin tokens only) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no_staging_clock: the season has no `[clock] travel = true`; nothing was written */
            409: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    counts: {
        parameters: {
            query?: {
                /** @description Period id (default: the current period by the league clock). */
                period?: number;
                /** @description Only this cohort's players and brackets (a label of the season's `[cohorts]`). */
                cohort?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CountsOut"];
                };
            };
            /** @description The query string cannot be read (a period that is not a number), or unknown_cohort */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_period */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    periods: {
        parameters: {
            query?: {
                /** @description Closed periods to list, newest first, 0-100 (default: `retention.periods`). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PeriodsOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    export: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A closed period's id */
                period: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description JSON lines: one ExportLine per line, each ending with a newline */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-ndjson": components["schemas"]["ExportLine"];
                };
            };
            /** @description The period is not a number */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_period, or expired (older than the retention) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description period_open: not closed yet */
            409: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    resettle: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A closed period */
                period: number;
                /** @description The bracket's tier (a cohort's: `tier@cohort`) */
                tier: string;
                /** @description Bracket number, from 1 */
                bracket: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ResettleIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ResettleOut"];
                };
            };
            /** @description no_exclusions, not_in_bracket, excludes_everyone, invalid_player, bad_bracket, bad_request (the reason) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: not an admin token */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_period, unknown_tier, unknown_bracket */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description bracket_not_closed */
            409: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    player: {
        parameters: {
            query?: {
                /** @description Period id (default: the current period by the league clock). */
                period?: number;
            };
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PlayerOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a player token for another player, or another bracket or period than its own */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_period */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    adjust: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AdjustIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AdjustOut"];
                };
            };
            /** @description invalid_player, score_out_of_range, bad_request (not exactly one of by and set, or an empty reason), invalid_json */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: not an admin token */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description not_placed: the player is not placed in the running period */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description period_closed; not_started with Retry-After */
            409: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description store_unreachable (nothing was written; Retry-After), unknown (send it again: an adjustment is answered once), or store_unavailable */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    around: {
        parameters: {
            query?: {
                /** @description Entries above and below the player, 0-500 (default 5). */
                radius?: number;
                /** @description Period id (default: current). */
                period?: number;
            };
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StandingsOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a player token for another player, or another bracket or period than its own */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description not_placed: the player has no bracket in the period */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    ban: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BanIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BanOut"];
                };
            };
            /** @description bad_request (empty or bad reason, no body), ban_in_past, invalid_time, invalid_player, invalid_json */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: not an admin token */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_player: the league has no record of the player */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description store_unreachable, store_unavailable, or unknown (send the ban again: it is idempotent) */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    player_events: {
        parameters: {
            query?: {
                /**
                 * @description Resume after this event id (an `id:` this stream sent), for clients that cannot
                 *     send the `Last-Event-ID` header; the header wins when both are sent.
                 */
                last_event_id?: string;
                /**
                 * @description The token, for clients that cannot send headers (a browser's `EventSource`);
                 *     `Authorization: Bearer` is preferred: a URL may end up in proxies' logs.
                 */
                access_token?: string;
            };
            header?: {
                /** @description Resume after this id (one this stream sent) */
                "Last-Event-ID"?: string | null;
            };
            path: {
                /** @description Player id (1-64 bytes of UTF-8) */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Server-sent events: the player's log events (`event: <type>`, `id`, `data`: an Event), `event: error` (no id, `data`: an ErrorBody) while the store fails, and on a stream opened with a player token a last `event: end` (no id, `data`: a StreamEnd, reason `token_expired` or `banned`) before the body ends */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["PlayerStreamEvent"];
                };
            };
            /** @description invalid_player; invalid_event_id: a Last-Event-ID (or last_event_id) this stream did not send: send back an id it sent, or none */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unauthorized: no token, or one the server does not know; token_expired: a player token past its exp */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a player token of another player; banned: a player token of a banned player (while the ban holds) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description events_disabled: the season has no [events] section */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description too_many_streams: this client (a player, whatever their tokens; or this token) already holds as many live streams as it may (LEAGUEKIT_STREAMS_PER_TOKEN): close one, or wait Retry-After */
            429: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description too_many_streams: the server holds as many live streams as it may (LEAGUEKIT_STREAMS_MAX): try again after Retry-After, or another server; store_unavailable, timeout: the store failed or was too slow */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    join: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters (percent-encode it) */
                player: string;
            };
            cookie?: never;
        };
        /** @description Optional: an empty body is `{}` */
        requestBody?: {
            content: {
                "application/json": components["schemas"]["JoinIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PlacementOut"];
                };
            };
            /** @description Bad id, time or cohort (invalid_player, invalid_time, before_season, outside_calendar, future_time, unknown_cohort, invalid_json) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden (a viewer token), or banned: the player is banned (the message says until when) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description period_closed, not_started, still_closing (with Retry-After) */
            409: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description store_unreachable (nothing was written; Retry-After), store_unavailable, or unknown (send the join again) */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    profile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProfileOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    set_profile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        /** @description The whole profile, e.g. {"name": "Ana"} */
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string;
                };
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProfileOut"];
                };
            };
            /** @description bad_request (no body), unknown_profile_field, profile_too_large, invalid_json, invalid_player */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    patch_profile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        /** @description Fields to set, or to remove with null, e.g. {"name": "Ana", "avatar": null} */
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | null;
                };
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProfileOut"];
                };
            };
            /** @description bad_request (no body), unknown_profile_field, profile_too_large, invalid_json, invalid_player */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    rewards: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RewardsOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a player token for another player, or another bracket or period than its own */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    claim: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        /** @description Optional: an empty body is `{}` */
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ClaimIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClaimOut"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description store_unreachable (nothing was written; Retry-After), store_unavailable, or unknown: resend only with the same request_id */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    submit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SubmitIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubmissionOut"];
                };
            };
            /** @description invalid_player, invalid_request_id, score_out_of_range, invalid_time, future_time, before_season, outside_calendar, unknown_cohort, invalid_json */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden (a viewer token), or banned: the player is banned (the message says until when) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description period_closed, not_joined; not_started and still_closing with Retry-After */
            409: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description limit_exceeded: beyond the season's limits.max_value or limits.max_period_score; nothing was written */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description rate_limited: more updates than the season's limits.rate allows; nothing was written; Retry-After */
            429: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description store_unreachable (nothing was written; Retry-After), unknown (resend only with the same request_id and the error's at), or store_unavailable */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    mint: {
        parameters: {
            query?: {
                /**
                 * @description How long the token lasts, in seconds: from 60 to the server's maximum
                 *     (`LEAGUEKIT_PLAYER_TOKEN_MAX_TTL`, default 86400; this document's `maximum`);
                 *     default 900, or the maximum if lower.
                 */
                ttl?: number;
            };
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters (percent-encode it) */
                player: string;
            };
            cookie?: never;
        };
        /** @description Optional: an empty body is `{}` */
        requestBody?: {
            content: {
                "application/json": components["schemas"]["TokenIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenOut"];
                };
            };
            /** @description invalid_player, invalid_json, bad_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a viewer or player token; banned: the player is banned (no token while the ban holds) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description player_tokens_disabled: the server has no LEAGUEKIT_PLAYER_TOKEN_SECRET */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description ttl_out_of_range: ttl is not from 60 seconds to the server's maximum (LEAGUEKIT_PLAYER_TOKEN_MAX_TTL, default 86400) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The store failed or was too slow (timeout; for a write, unknown) */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    unban: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Player id: 1-64 bytes of UTF-8 without control characters */
                player: string;
            };
            cookie?: never;
        };
        /** @description Optional: an empty body is `{}` */
        requestBody?: {
            content: {
                "application/json": components["schemas"]["UnbanIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UnbanOut"];
                };
            };
            /** @description bad_request (bad reason), invalid_player, invalid_json */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: not an admin token */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_player */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description store_unreachable, store_unavailable, or unknown (send it again: it is idempotent) */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    batch: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BatchItemIn"][];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchItemOut"][];
                };
            };
            /** @description The body is not a JSON array */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large, too_many_items */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown: the request timed out after its body came; resend only with the same request_ids */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    season: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SeasonOut"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a player token for another player, or another bracket or period than its own */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The store failed or was too slow (timeout; for a write, unknown) */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    standings: {
        parameters: {
            query?: {
                /** @description Period id (default: current). */
                period?: number;
                /** @description First rank to show, 0-based (default 0). */
                offset?: number;
                /** @description Entries to show, 1-1000 (default 100). */
                limit?: number;
                /**
                 * @description The cohort whose brackets to read (a label of the season's `[cohorts]`); the
                 *     bracket number counts within it. Default: the brackets of players without one.
                 */
                cohort?: string;
            };
            header?: never;
            path: {
                /** @description Tier name */
                tier: string;
                /** @description Bracket number, from 1 */
                bracket: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StandingsOut"];
                };
            };
            /** @description bad_bracket, bad_limit, unknown_cohort */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a player token for another player, or another bracket or period than its own */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_tier, unknown_period */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    events: {
        parameters: {
            query?: {
                /** @description Period id (default: follow the current period, also across a boundary). */
                period?: number;
                /** @description Entries to send, 1-1000 (default 100). */
                limit?: number;
                /** @description The cohort whose brackets to follow (see the standings' `cohort`). */
                cohort?: string;
                /**
                 * @description With `[events]`: resume the log events after this event id (an `id:` this
                 *     stream sent), for clients that cannot send the `Last-Event-ID` header; the
                 *     header wins when both are sent.
                 */
                last_event_id?: string;
                /**
                 * @description The token, for clients that cannot send headers (a browser's `EventSource`);
                 *     `Authorization: Bearer` is preferred: a URL may end up in proxies' logs.
                 */
                access_token?: string;
            };
            header?: {
                /** @description Resume the log events after this id (one this stream sent) */
                "Last-Event-ID"?: string | null;
            };
            path: {
                /** @description Tier name */
                tier: string;
                /** @description Bracket number, from 1 */
                bracket: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Server-sent events: `event: standings` whose `data` is a StandingsOut, `event: error` whose `data` is an ErrorBody, with `[events]` the bracket's log events (`event: <type>`, `id`, `data`: an Event), and on a stream opened with a player token a last `event: end` (no id, `data`: a StreamEnd, reason `token_expired` or `banned`) before the body ends */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["BracketStreamEvent"];
                };
            };
            /** @description bad_bracket, bad_limit, unknown_cohort, invalid_event_id (send back an id this stream sent) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unauthorized: no token, or one the server does not know; token_expired: a player token past its exp */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: a player token for another bracket or period than its own; banned: a player token of a banned player (while the ban holds) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_tier, unknown_period */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description too_many_streams: this client (a player, whatever their tokens; or this token) already holds as many live streams as it may (LEAGUEKIT_STREAMS_PER_TOKEN): close one, or wait Retry-After */
            429: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description too_many_streams: the server holds as many live streams as it may (LEAGUEKIT_STREAMS_MAX): try again after Retry-After, or another server; store_unavailable, timeout: the store failed or was too slow */
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    top: {
        parameters: {
            query?: {
                /**
                 * @description Period id (default: current); a closed period's list is the one frozen at its
                 *     rollover.
                 */
                period?: number;
                /** @description Entries to show, 1-1000 (default 100). */
                limit?: number;
                /**
                 * @description One cohort's list (a label of the season's `[cohorts]`). Default: the whole
                 *     tier, across cohorts.
                 */
                cohort?: string;
            };
            header?: never;
            path: {
                /** @description Tier name */
                tier: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TopOut"];
                };
            };
            /** @description bad_limit, unknown_cohort */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description unknown_tier, unknown_period */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    dead: {
        parameters: {
            query?: {
                /** @description The `next` of the page before: list the letters recorded after it. */
                after?: string;
                /** @description At most this many letters, 1-1000 (default 100). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeadLettersOut"];
                };
            };
            /** @description bad_request: an `after` that is no page cursor, or a `limit` outside 1-1000 */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: not an admin token */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    replay: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReplayIn"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReplayOut"];
                };
            };
            /** @description bad_request: neither or both of ids and all, an id with no dead letter, or a bad reason */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description forbidden: not an admin token */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description body_timeout: the body did not finish arriving within the request timeout; nothing was written */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description payload_too_large: the body is over the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: {
                headers: {
                    /** @description With not_started, still_closing, rate_limited, store_unreachable and too_many_streams: whole seconds to wait before sending the same request again (also `retry_after_ms` in the body) */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
}

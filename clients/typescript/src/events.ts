// League events: the same JSON object in a webhook's body, a stream's `data:` line
// and any list of events. New types and new fields may appear in later versions of
// the server: they are passed through (`UnknownEvent`), never refused.
import type { components } from "./schema.js";

/** Fields every event has. */
export interface EventBase<T extends string, D> {
    /** Opaque, unique in the league: the key to deduplicate by. */
    id: string;
    type: T;
    season: string;
    period: number;
    /** Unix milliseconds, by the league clock. */
    at: number;
    player: string | null;
    tier: string | null;
    bracket: number | null;
    data: D;
}

export interface Grant {
    source: string;
    grant: string;
}

export type PlayerPlaced = EventBase<"player.placed", Record<string, never>>;
export type PlayerOvertaken = EventBase<"player.overtaken", { by: string; rank: number }>;
export type BracketClosed = EventBase<"bracket.closed", { players: number; active: number }>;
export interface SettledData {
    rank: number;
    score: number;
    next_tier: string;
}
export type PlayerPromoted = EventBase<"player.promoted", SettledData>;
export type PlayerDemoted = EventBase<"player.demoted", SettledData>;
export type PlayerStayed = EventBase<"player.stayed", SettledData>;
export type RewardGranted = EventBase<"reward.granted", Grant>;
export type RewardClaimed = EventBase<"reward.claimed", { rewards: Grant[] }>;
export type PeriodClosed = EventBase<"period.closed", { brackets: number; players: number }>;
export type ScoreAdjusted = EventBase<"score.adjusted", { before: number; after: number }>;
export type PlayerResettled = EventBase<
    "player.resettled",
    { version: number; rank: number; outcome: "promoted" | "stayed" | "demoted"; next_tier: string }
>;

/** The event types this version of the client knows. */
export const KNOWN_EVENT_TYPES = [
    "player.placed",
    "player.overtaken",
    "bracket.closed",
    "player.promoted",
    "player.demoted",
    "player.stayed",
    "reward.granted",
    "reward.claimed",
    "period.closed",
    "score.adjusted",
    "player.resettled",
] as const;
export type KnownEventType = (typeof KNOWN_EVENT_TYPES)[number];

export type KnownEvent =
    | PlayerPlaced
    | PlayerOvertaken
    | BracketClosed
    | PlayerPromoted
    | PlayerDemoted
    | PlayerStayed
    | RewardGranted
    | RewardClaimed
    | PeriodClosed
    | ScoreAdjusted
    | PlayerResettled;

/**
 * An event of a type this client does not know yet (a newer server): its fields as
 * sent. `known` is false so that a switch on `type` still narrows the known ones.
 */
export interface UnknownEvent extends EventBase<string, Record<string, unknown>> {
    readonly known: false;
}

/** A league event: one of the known types, or an unknown one passed through. */
export type LeagueEvent = (KnownEvent & { readonly known: true }) | UnknownEvent;

/** A snapshot of a bracket's standings, sent on the bracket stream (it has no id). */
export interface StandingsSnapshot {
    kind: "standings";
    standings: components["schemas"]["StandingsOut"];
}

/**
 * An event read from a stream, with the stream's cursor (its SSE `id:`, not the
 * event's `id`): give it back as `lastEventId` to resume after it.
 */
export type StreamedEvent = LeagueEvent & { readonly cursor: string | undefined };

/** One item of a stream: a league event, or a standings snapshot. */
export type StreamItem = { kind: "event"; event: StreamedEvent } | StandingsSnapshot;

export class EventFormatError extends Error {
    override readonly name = "EventFormatError";
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nullableString(value: unknown): value is string | null {
    return value === null || typeof value === "string";
}

/**
 * Checks the common fields of a parsed event and marks whether its type is known.
 * Throws `EventFormatError` when a common field is missing or of the wrong type;
 * unknown fields are kept.
 */
export function toLeagueEvent(value: unknown): LeagueEvent {
    if (!isObject(value)) {
        throw new EventFormatError("an event must be a JSON object");
    }
    const { id, type, season, period, at, player, tier, bracket, data } = value;
    if (typeof id !== "string" || id === "") {
        throw new EventFormatError("an event's id must be a non-empty string");
    }
    if (typeof type !== "string" || type === "") {
        throw new EventFormatError(`event ${id}: type must be a non-empty string`);
    }
    if (typeof season !== "string") {
        throw new EventFormatError(`event ${id}: season must be a string`);
    }
    if (typeof period !== "number" || typeof at !== "number") {
        throw new EventFormatError(`event ${id}: period and at must be numbers`);
    }
    if (!nullableString(player) || !nullableString(tier)) {
        throw new EventFormatError(`event ${id}: player and tier must be strings or null`);
    }
    if (bracket !== null && typeof bracket !== "number") {
        throw new EventFormatError(`event ${id}: bracket must be a number or null`);
    }
    if (data !== undefined && !isObject(data)) {
        throw new EventFormatError(`event ${id}: data must be an object`);
    }
    const known = (KNOWN_EVENT_TYPES as readonly string[]).includes(type);
    return { ...value, data: data ?? {}, known } as LeagueEvent;
}

/** Parses an event's JSON text (a webhook's body, a stream's data). */
export function parseEvent(text: string): LeagueEvent {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch (error) {
        throw new EventFormatError(`an event must be JSON: ${(error as Error).message}`);
    }
    return toLeagueEvent(value);
}

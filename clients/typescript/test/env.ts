// The server the end-to-end tests run against, as `run` starts it.
import { LeagueClient } from "../src/index.js";

function need(name: string): string {
    const value = process.env[name];
    if (value === undefined || value === "") {
        throw new Error(`${name} is not set: run these tests with clients/typescript/run`);
    }
    return value;
}

export const baseUrl = need("LEAGUEKIT_TEST_URL");
export const tokens = {
    server: need("LEAGUEKIT_TEST_SERVER_TOKEN"),
    viewer: need("LEAGUEKIT_TEST_VIEWER_TOKEN"),
    admin: need("LEAGUEKIT_TEST_ADMIN_TOKEN"),
};
export const server = new LeagueClient({ baseUrl, token: tokens.server });
export const viewer = new LeagueClient({ baseUrl, token: tokens.viewer });
export const admin = new LeagueClient({ baseUrl, token: tokens.admin });

/** A suffix that keeps this run's players apart from another's. */
export const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

/** Moves the staging clock past the running period's close and waits until the scheduler closed it. */
export async function rollOver(reason: string): Promise<number> {
    const periods = await viewer.periods();
    const current = periods.current;
    if (current === null || current === undefined) {
        throw new Error("no running period");
    }
    const closesAt = Date.parse(current.closes_at);
    const clock = await admin.clock();
    if (Date.parse(clock.now) <= closesAt) {
        await admin.moveClock({ set: new Date(closesAt + 1000).toISOString(), reason });
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
        const now = await viewer.periods();
        if (now.closed_through >= current.id) {
            return current.id;
        }
        if (Date.now() > deadline) {
            throw new Error(`period ${current.id} was not closed within 60 s: ${JSON.stringify(now)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
    }
}

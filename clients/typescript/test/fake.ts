// A scripted fetch for unit tests: each call is answered by the next step.
export interface Sent {
    url: string;
    method: string;
    headers: Record<string, string>;
    body: unknown;
}

export type Step = (sent: Sent) => Response | Promise<Response>;

export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): Response {
    return new Response(JSON.stringify(body), {
        status,
        headers: { "Content-Type": "application/json", ...headers },
    });
}

export function errorAnswer(status: number, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Response {
    return jsonAnswer(status, { error: { code, message: `${code} (test)`, ...extra } }, headers);
}

export function fakeFetch(steps: Step[]): { fetch: typeof fetch; sent: Sent[] } {
    const sent: Sent[] = [];
    const fetchImpl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
        const headers: Record<string, string> = {};
        new Headers(init?.headers).forEach((value, key) => {
            headers[key] = value;
        });
        const request: Sent = {
            url: String(input),
            method: init?.method ?? "GET",
            headers,
            body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
        };
        sent.push(request);
        const step = steps[sent.length - 1];
        if (step === undefined) {
            throw new Error(`unexpected request ${sent.length}: ${request.method} ${request.url}`);
        }
        return step(request);
    };
    return { fetch: fetchImpl as typeof fetch, sent };
}

/** A sleep that records the waits and returns at once. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
    const waits: number[] = [];
    return {
        waits,
        sleep: async (ms: number) => {
            waits.push(ms);
        },
    };
}

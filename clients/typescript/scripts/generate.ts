// Generates src/schema.ts, the API's types, from the OpenAPI document that
// `leaguekit serve` publishes, with openapi-typescript (pinned in package.json).
//
//   npm run generate -- --url http://127.0.0.1:8080 --token VIEWER_TOKEN
//   npm run generate -- --file openapi.json
//   npm run check-schema -- --url ... --token ...   (fails if src/schema.ts differs)
//
// The URL and token may also come from LEAGUEKIT_URL and LEAGUEKIT_TOKEN (any token
// reads the document).
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import openapiTS, { astToString } from "openapi-typescript";

const { values } = parseArgs({
    options: {
        url: { type: "string" },
        token: { type: "string" },
        file: { type: "string" },
        check: { type: "boolean", default: false },
    },
});

const target = fileURLToPath(new URL("../src/schema.ts", import.meta.url));

async function loadDocument(): Promise<string> {
    if (values.file !== undefined) {
        return readFile(values.file, "utf8");
    }
    const base = values.url ?? process.env["LEAGUEKIT_URL"];
    const token = values.token ?? process.env["LEAGUEKIT_TOKEN"];
    if (base === undefined || token === undefined) {
        throw new Error("give --file openapi.json, or --url and --token (or LEAGUEKIT_URL and LEAGUEKIT_TOKEN)");
    }
    const answer = await fetch(new URL("/openapi.json", base), {
        headers: { Authorization: `Bearer ${token}` },
    });
    if (!answer.ok) {
        throw new Error(`GET ${base}/openapi.json: HTTP ${answer.status} ${await answer.text()}`);
    }
    return answer.text();
}

const document: unknown = JSON.parse(await loadDocument());
const ast = await openapiTS(document as Parameters<typeof openapiTS>[0]);
const header =
    "// The HTTP API's types, generated from `leaguekit serve`'s /openapi.json by\n" +
    "// openapi-typescript. Do not edit: run `npm run generate` (see scripts/generate.ts).\n\n";
const generated = header + astToString(ast);

if (values.check) {
    const committed = await readFile(target, "utf8").catch(() => "");
    if (committed !== generated) {
        const a = committed.split("\n");
        const b = generated.split("\n");
        let line = 0;
        while (line < Math.max(a.length, b.length) && a[line] === b[line]) {
            line += 1;
        }
        console.error(
            `src/schema.ts is stale: it differs from the server's /openapi.json from line ${line + 1}\n` +
                `  committed: ${JSON.stringify(a[line] ?? "<end of file>")}\n` +
                `  generated: ${JSON.stringify(b[line] ?? "<end of file>")}\n` +
                "Regenerate it against a running server and commit the result:\n" +
                "  cd clients/typescript && npm run generate -- --url http://127.0.0.1:8080 --token TOKEN",
        );
        process.exit(1);
    }
    console.error("src/schema.ts matches the server's /openapi.json");
} else {
    await writeFile(target, generated);
    console.error(`wrote ${target}`);
}

// The leaguekit dashboard: plain JavaScript, no build step, no third-party code.
// It reads the same API as game servers, with the viewer token the sign-in page put
// in a session cookie, and follows one bracket live through server-sent events.
"use strict";

const state = {
  season: null,
  counts: null,
  periods: null,
  offsetMs: 0,        // league clock minus this browser's clock
  watching: null,     // {tier, bracket}
  source: null,       // EventSource of the watched bracket
  lastRows: new Map() // player -> score, to flash changes
};

const $ = (id) => document.getElementById(id);

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

async function api(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  if (r.status === 401) {
    // The token is gone or was revoked: the page itself shows the sign-in form.
    location.reload();
    throw new Error("signed out");
  }
  const body = await r.json().catch(() => null);
  if (!r.ok) {
    const msg = body && body.error ? body.error.message : r.statusText;
    const err = new Error(msg);
    err.code = body && body.error ? body.error.code : String(r.status);
    err.status = r.status;
    throw err;
  }
  return body;
}

const fmt = new Intl.NumberFormat();
const n = (x) => (x === null || x === undefined ? "–" : fmt.format(x));
const plural = (x, word) => `${n(x)} ${word}${x === 1 ? "" : "s"}`;

function duration(ms) {
  if (ms <= 0) return "0s";
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60), sec = s % 60;
  const pad = (v) => String(v).padStart(2, "0");
  return (d ? d + "d " : "") + pad(h) + ":" + pad(m) + ":" + pad(sec);
}

function localTime(iso) {
  const t = new Date(iso);
  return t.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

// ---- season, tiers, counts ---------------------------------------------------

async function loadSeason() {
  state.season = await api("/v1/season");
  const s = state.season;
  $("season-name").textContent = s.name;
  $("season-rules").textContent =
    `${s.period} · ${s.timezone} · brackets of ${s.bracket_size} · ${s.mode}`;
  document.title = `${s.name} · leaguekit`;
}

async function loadCounts() {
  try {
    state.counts = await api("/v1/counts");
    renderTiers();
  } catch (e) {
    if (e.message !== "signed out") $("tiers-total").textContent = "(" + e.message + ")";
  }
}

function renderTiers() {
  const list = $("tier-list");
  const counts = new Map(state.counts.tiers.map((t) => [t.tier, t]));
  const total = state.counts.tiers.reduce((a, t) => a + t.players, 0);
  $("tiers-total").textContent = `${plural(total, "player")} in period ${state.counts.period}`;
  list.replaceChildren();
  // The ladder from the top tier down.
  for (const tier of [...state.season.tiers].reverse()) {
    const c = counts.get(tier.name) || { players: 0, brackets: 0 };
    const chips = el("div", { class: "chips" });
    const shown = Math.min(c.brackets, 40);
    for (let b = 1; b <= shown; b++) {
      const active = state.watching && state.watching.tier === tier.name && state.watching.bracket === b;
      chips.append(el("button", {
        type: "button",
        class: "chip" + (active ? " active" : ""),
        "data-tier": tier.name,
        "data-bracket": String(b),
        title: `${tier.name} bracket ${b}`,
        onclick: () => watch(tier.name, b),
      }, String(b)));
    }
    if (c.brackets > shown) chips.append(el("span", { class: "muted" }, ` … ${c.brackets - shown} more`));
    if (c.brackets === 0) chips.append(el("span", { class: "muted" }, "no brackets yet"));
    const rules = `up ${tier.promote} · down ${tier.demote}`;
    list.append(el("li", { class: "tier", "data-tier": tier.name },
      el("div", { class: "tier-head" },
        el("span", { class: "tier-name" }, tier.name),
        el("span", { class: "tier-count" }, `${plural(c.players, "player")} · ${plural(c.brackets, "bracket")}`)),
      el("div", { class: "muted small" }, rules),
      chips));
  }
}

// ---- the league clock and the rollover ---------------------------------------

async function loadPeriods() {
  try {
    const p = await api("/v1/periods");
    state.periods = p;
    state.offsetMs = Date.parse(p.now) - Date.now();
    renderPeriods();
  } catch (e) {
    if (e.message !== "signed out") $("rollover-status").textContent = e.message;
  }
}

function tick() {
  const p = state.periods;
  if (!p) return;
  const now = Date.now() + state.offsetMs;
  if (p.current) {
    const left = Date.parse(p.current.end) - now;
    $("countdown").textContent = left > 0 ? duration(left) : "ended, closing";
  } else if (p.next_boundary) {
    $("countdown").textContent = "starts in " + duration(Date.parse(p.next_boundary) - now);
  }
}

function renderPeriods() {
  const p = state.periods;
  $("period-id").textContent = p.current ? p.current.id : "–";
  $("period-range").textContent = p.current
    ? `${localTime(p.current.start)} → ${localTime(p.current.end)}`
    : "the season has not started";
  tick();
  const status = $("rollover-status");
  status.replaceChildren();
  const line = p.closed_through === 0
    ? "No period closed yet."
    : `Closed through period ${p.closed_through}.`;
  status.append(el("div", {}, line));
  if (p.pending.length) {
    status.append(el("div", { class: "warn" },
      `Waiting for the rollover: period${p.pending.length > 1 ? "s" : ""} ${p.pending.join(", ")}.`));
  } else {
    status.append(el("div", { class: "ok" }, "Up to date: every ended period is closed."));
  }
  if (p.blocked_rewards) {
    status.append(el("div", { class: "warn" },
      `${p.blocked_rewards} reward grant(s) blocked: run leaguekit rollover to see which.`));
  }
  const body = $("reports").querySelector("tbody");
  body.replaceChildren();
  for (const r of p.closed) {
    body.append(el("tr", { title: Object.entries(r.tiers).map(([t, v]) => `${t}: ${v.players} players`).join("\n") },
      el("td", { class: "num" }, r.period), el("td", { class: "num" }, n(r.brackets)),
      el("td", { class: "num" }, n(r.players)), el("td", { class: "num up" }, n(r.promoted)),
      el("td", { class: "num down" }, n(r.demoted)), el("td", { class: "num" }, n(r.stayed)),
      el("td", { class: "num" }, n(r.rewards))));
  }
  if (!p.closed.length) body.append(el("tr", {}, el("td", { colspan: "7", class: "muted" }, "No reports yet.")));
}

// ---- a bracket, live ---------------------------------------------------------

function setLive(stateName, text) {
  $("live").dataset.state = stateName;
  $("live-text").textContent = text;
}

function watch(tier, bracket) {
  if (state.source) state.source.close();
  state.watching = { tier, bracket };
  state.lastRows = new Map();
  history.replaceState(null, "", `#/tiers/${encodeURIComponent(tier)}/brackets/${bracket}`);
  $("bracket-title").textContent = `${tier} · bracket ${bracket}`;
  $("bracket-info").textContent = "Connecting…";
  document.querySelectorAll(".chip").forEach((c) =>
    c.classList.toggle("active", c.dataset.tier === tier && c.dataset.bracket === String(bracket)));
  setLive("connecting", "connecting");
  const url = `/v1/tiers/${encodeURIComponent(tier)}/brackets/${bracket}/events?limit=100`;
  const source = new EventSource(url);
  state.source = source;
  source.addEventListener("open", () => setLive("live", "live"));
  source.addEventListener("standings", (e) => {
    setLive("live", "live");
    renderStandings(JSON.parse(e.data));
  });
  source.addEventListener("error", (e) => {
    if (e.data) {
      const body = JSON.parse(e.data);
      setLive("error", body.error.code);
      $("bracket-info").textContent = body.error.message;
    } else if (source.readyState === EventSource.CLOSED) {
      setLive("error", "disconnected");
    } else {
      setLive("connecting", "reconnecting");
    }
  });
}

function renderStandings(s) {
  const profileFields = state.season ? state.season.profile_fields : [];
  $("bracket-info").textContent =
    `Period ${s.period} · ${n(s.players)} player${s.players === 1 ? "" : "s"}` +
    (s.entries.length < s.players ? ` · top ${s.entries.length} shown` : "");
  const body = $("standings").querySelector("tbody");
  const rows = [];
  const seen = new Map();
  for (const e of s.entries) {
    const name = e.profile && e.profile.name ? e.profile.name : null;
    const avatar = e.profile && typeof e.profile.avatar === "string" && /^(https:|data:image\/)/.test(e.profile.avatar)
      ? el("img", { class: "avatar", src: e.profile.avatar, alt: "" })
      : el("span", { class: "avatar initials" }, (name || e.player).slice(0, 1).toUpperCase());
    const extra = profileFields.filter((f) => f !== "name" && f !== "avatar" && e.profile && e.profile[f])
      .map((f) => `${f}: ${e.profile[f]}`).join(" · ");
    const before = state.lastRows.get(e.player);
    const changed = state.lastRows.size > 0 && before !== e.score;
    seen.set(e.player, e.score);
    rows.push(el("tr", { class: changed ? "changed" : "", "data-player": e.player },
      el("td", { class: "num rank" }, e.rank),
      el("td", {},
        el("div", { class: "who" }, avatar,
          el("div", {},
            el("div", { class: "pname" }, name || e.player),
            el("div", { class: "muted small" }, name ? e.player + (extra ? " · " + extra : "") : extra)))),
      el("td", { class: "num score" }, n(e.score))));
  }
  if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: "3", class: "muted" }, "Nobody in this bracket yet.")));
  body.replaceChildren(...rows);
  state.lastRows = seen;
}

// ---- player search -----------------------------------------------------------

async function lookUp(player) {
  const out = $("player-result");
  out.replaceChildren(el("div", { class: "muted" }, "Looking up…"));
  try {
    const id = encodeURIComponent(player);
    const [p, r] = await Promise.all([api(`/v1/players/${id}`), api(`/v1/players/${id}/rewards`)]);
    const rows = [
      ["Period", p.period],
      ["Tier", p.tier + (p.bracket ? "" : " (next join)")],
      ["Bracket", p.bracket ?? "not placed"],
      ["Rank", p.rank ?? "–"],
      ["Score", n(p.score)],
    ];
    const dl = el("dl", { class: "facts" });
    for (const [k, v] of rows) dl.append(el("dt", {}, k), el("dd", {}, v));
    const parts = [el("h3", {}, p.player), dl];
    if (p.bracket) {
      parts.push(el("button", { type: "button", class: "ghost", onclick: () => watch(p.tier, p.bracket) },
        "Watch this bracket"));
    }
    if (p.last) {
      const l = p.last;
      parts.push(el("h4", {}, "Last period"),
        el("p", { class: "last " + l.outcome },
          `Period ${l.period}: ${l.tier} bracket ${l.bracket}, rank ${l.rank} with ${n(l.score)} → ${l.outcome}` +
          (l.outcome === "stayed" ? ` in ${l.next_tier}` : ` to ${l.next_tier}`) +
          (l.reward ? ` · reward ${l.reward}` : "")));
    } else {
      parts.push(el("p", { class: "muted" }, "No closed period yet."));
    }
    parts.push(el("h4", {}, "Pending rewards"));
    if (r.rewards.length) {
      parts.push(el("ul", { class: "rewards" }, ...r.rewards.map((x) => el("li", {}, el("b", {}, x.grant), ` from ${x.source}`))));
    } else {
      parts.push(el("p", { class: "muted" }, "None."));
    }
    out.replaceChildren(...parts);
  } catch (e) {
    out.replaceChildren(el("div", { class: "warn" }, e.message));
  }
}

// ---- start -------------------------------------------------------------------

function fromHash() {
  const m = location.hash.match(/^#\/tiers\/([^/]+)\/brackets\/(\d+)$/);
  return m ? { tier: decodeURIComponent(m[1]), bracket: Number(m[2]) } : null;
}

async function start() {
  $("sign-out").addEventListener("click", () => {
    document.cookie = "leaguekit_token=; path=/; max-age=0; SameSite=Strict";
    location.reload();
  });
  $("player-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const v = $("player-input").value.trim();
    if (v) lookUp(v);
  });
  try {
    await loadSeason();
  } catch (e) {
    $("bracket-info").textContent = e.message;
    return;
  }
  await Promise.all([loadCounts(), loadPeriods()]);
  const wanted = fromHash();
  if (wanted) {
    watch(wanted.tier, wanted.bracket);
  } else if (state.counts) {
    const first = state.counts.tiers.find((t) => t.brackets > 0);
    if (first) watch(first.tier, 1);
  }
  setInterval(tick, 1000);
  setInterval(loadCounts, 5000);
  setInterval(loadPeriods, 5000);
}

document.addEventListener("DOMContentLoaded", start);

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
  feed: [],           // its latest log events, newest first
  lastRows: new Map(), // player -> score, to flash changes
  admin: false        // whether the token is an admin's (the operator's card)
};

const $ = (id) => document.getElementById(id);

// The token the sign-in page keeps in the session cookie. Reads send the cookie; the
// operator's actions are writes, which the server takes only with the token in an
// Authorization header.
function token() {
  const m = document.cookie.match(/(?:^|;\s*)leaguekit_token=([^;]+)/);
  return m ? m[1] : "";
}

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

// An operator's write: JSON in, JSON out, the token as a bearer token.
async function send(path, body) {
  const r = await fetch(path, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json", Authorization: "Bearer " + token() },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  const answer = await r.json().catch(() => null);
  if (!r.ok) {
    const err = new Error(answer && answer.error ? answer.error.message : r.statusText);
    err.code = answer && answer.error ? answer.error.code : String(r.status);
    err.status = r.status;
    throw err;
  }
  return answer;
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
    let rules = `up ${tier.promote} · down ${tier.demote}`;
    const percent = tier.promote.endsWith("%") || tier.demote.endsWith("%");
    if (tier.zones === "size" && percent) rules += ` · % of ${state.season.bracket_size}`;
    if (tier.min_players > 0) rules += ` · no demotion under ${tier.min_players} active`;
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
  state.feed = [];
  renderFeed();
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
  // With [events], the stream also carries the bracket's log events (each with an id,
  // which the browser sends back as Last-Event-ID when it reconnects, so none is
  // missed); the standings themselves come as `standings` snapshots.
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (e) => {
      try {
        addToFeed(JSON.parse(e.data));
      } catch (_) {
        // An event this page cannot read: skipped.
      }
    });
  }
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

// The log events a bracket's stream carries (a newer server may send others: they
// are not listened to).
const EVENT_TYPES = ["player.placed", "player.overtaken", "bracket.closed", "player.promoted",
  "player.demoted", "player.stayed", "score.adjusted", "player.resettled"];
const FEED_SIZE = 8;

function addToFeed(ev) {
  if (state.feed.some((f) => f.id === ev.id)) return;
  state.feed.unshift(ev);
  state.feed.length = Math.min(state.feed.length, FEED_SIZE);
  renderFeed();
}

// One line of the feed: what happened, in words.
function describe(ev) {
  const d = ev.data || {};
  const who = ev.player || "";
  switch (ev.type) {
    case "player.placed": return [`${who} joined the bracket`, ""];
    case "player.overtaken": return [`${d.by} overtook ${who}${d.rank ? ` (now #${d.rank})` : ""}`, "down"];
    case "bracket.closed": return [`bracket closed: ${n(d.players)} players, ${n(d.active)} active`, ""];
    case "player.promoted": return [`${who} promoted to ${d.next_tier} (#${d.rank})`, "up"];
    case "player.demoted": return [`${who} demoted to ${d.next_tier} (#${d.rank})`, "down"];
    case "player.stayed": return [`${who} stays in ${d.next_tier} (#${d.rank})`, ""];
    case "score.adjusted": return [`${who}'s score corrected: ${n(d.before)} → ${n(d.after)}`, ""];
    case "player.resettled": return [`${who} re-settled: ${d.outcome} (#${d.rank})`, ""];
    default: return [`${ev.type}${who ? " · " + who : ""}`, ""];
  }
}

function renderFeed() {
  const list = $("feed");
  list.replaceChildren(...state.feed.map((ev) => {
    const [text, cls] = describe(ev);
    const at = new Date(ev.at);
    return el("li", { "data-type": ev.type },
      el("span", { class: "when", title: at.toISOString() }, at.toLocaleTimeString()),
      el("span", { class: cls }, text));
  }));
  $("feed-wrap").hidden = state.feed.length === 0;
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

// `notice`: what an operator's action just did, shown on the refreshed card.
async function lookUp(player, notice) {
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
    if (notice) parts.push(el("div", { class: "ok notice", role: "status" }, notice));
    if (state.admin) parts.push(playerActions(p));
    out.replaceChildren(...parts);
  } catch (e) {
    out.replaceChildren(el("div", { class: "warn" }, e.message));
  }
}

// ---- the operator (admin tokens) ----------------------------------------------

// Whether the token is an admin's: the audit log answers only to one.
async function loadOperator() {
  try {
    const audit = await api("/v1/audit?limit=1000");
    state.admin = true;
    $("operator").hidden = false;
    renderAudit(audit.entries);
    renderBans((await api("/v1/bans")).bans);
  } catch (e) {
    if (e.status === 403) {
      state.admin = false;
      $("operator").hidden = true;
    }
  }
}

function renderAudit(entries) {
  const body = $("audit").querySelector("tbody");
  const rows = [...entries].reverse().slice(0, 100).map((e) =>
    el("tr", { title: JSON.stringify(e.details) },
      el("td", {}, localTime(e.at)), el("td", {}, e.actor), el("td", {}, e.action),
      el("td", {}, e.player || "–"), el("td", {}, e.reason || "")));
  if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: "5", class: "muted" }, "No operator action yet.")));
  body.replaceChildren(...rows);
}

function renderBans(bans) {
  const body = $("bans").querySelector("tbody");
  const rows = bans.map((b) =>
    el("tr", {},
      el("td", {}, el("a", { href: "#", onclick: (ev) => { ev.preventDefault(); lookUp(b.player); } }, b.player)),
      el("td", {}, b.until ? localTime(b.until) : "until lifted"), el("td", {}, b.reason || ""),
      el("td", {}, b.actor || "")));
  if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: "4", class: "muted" }, "Nobody is banned.")));
  body.replaceChildren(...rows);
}

// The staging clock: a loud banner while the season lets operators move time.
async function loadStaging() {
  const s = state.season;
  if (!s || !s.travel) return;
  const banner = $("staging");
  banner.hidden = false;
  banner.textContent = `Staging clock: the league clock runs ${duration(s.clock_offset_ms)} ahead ` +
    "of the store's (season [clock] travel = true). Never use this season in production.";
}

// What an admin may do to a looked-up player, each after a confirmation.
function playerActions(p) {
  const id = encodeURIComponent(p.player);
  const what = el("select", { "aria-label": "action" },
    el("option", { value: "ban" }, "Ban"),
    el("option", { value: "unban" }, "Unban"),
    el("option", { value: "adjust-by" }, "Adjust score by"),
    el("option", { value: "adjust-set" }, "Set score to"));
  if (p.last) what.append(el("option", { value: "resettle" }, `Re-settle period ${p.last.period} without them`));
  const value = el("input", { type: "number", step: "1", placeholder: "amount", "aria-label": "amount" });
  const until = el("input", { type: "datetime-local", "aria-label": "banned until (empty: until lifted)" });
  const reason = el("input", { placeholder: "reason (required)", "aria-label": "reason", maxlength: "500" });
  const result = el("div", { class: "result muted small", role: "status" });
  const go = el("button", { type: "submit" }, "Apply");
  const form = el("form", { class: "actions" }, what, value, until, reason, go, result);
  const show = () => {
    value.hidden = !what.value.startsWith("adjust");
    until.hidden = what.value !== "ban";
  };
  what.addEventListener("change", show);
  show();
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const why = reason.value.trim();
    let path, body, question;
    switch (what.value) {
      case "ban":
        body = { reason: why };
        if (until.value) body.until = new Date(until.value).toISOString();
        path = `/v1/players/${id}/ban`;
        question = `Ban ${p.player}${body.until ? " until " + localTime(body.until) : ""}? They leave their bracket now.`;
        break;
      case "unban":
        path = `/v1/players/${id}/unban`;
        body = why ? { reason: why } : {};
        question = `Lift ${p.player}'s ban?`;
        break;
      case "adjust-by":
      case "adjust-set": {
        const key = what.value === "adjust-by" ? "by" : "set";
        if (value.value === "") { result.textContent = "Give an amount."; return; }
        body = { [key]: Number(value.value), reason: why };
        path = `/v1/players/${id}/adjust`;
        question = key === "by"
          ? `Change ${p.player}'s score by ${value.value}?`
          : `Set ${p.player}'s score to ${value.value}?`;
        break;
      }
      case "resettle": {
        const l = p.last;
        path = `/v1/periods/${l.period}/tiers/${encodeURIComponent(l.tier)}/brackets/${l.bracket}/resettle`;
        body = { exclude: [p.player], reason: why };
        question = `Settle period ${l.period}, ${l.tier} bracket ${l.bracket} again without ${p.player}? ` +
          "Players below them gain what they now earn.";
        break;
      }
    }
    if (what.value !== "unban" && !why) { result.textContent = "Say why: the audit log keeps it."; return; }
    if (!window.confirm(question)) return;
    go.disabled = true;
    try {
      await send(path, body);
      await Promise.all([loadOperator(), loadCounts()]);
      lookUp(p.player, `Done: ${what.options[what.selectedIndex].text}${what.value.startsWith("adjust") ? " " + value.value : ""}.`);
    } catch (e) {
      result.textContent = e.message;
    } finally {
      go.disabled = false;
    }
  });
  return form;
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
  await Promise.all([loadCounts(), loadPeriods(), loadOperator()]);
  loadStaging();
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
  setInterval(() => { if (state.admin) loadOperator(); }, 10000);
  // A moved staging clock changes the offset the banner shows.
  setInterval(async () => {
    if (state.season && state.season.travel) {
      await loadSeason().catch(() => {});
      loadStaging();
    }
  }, 5000);
}

document.addEventListener("DOMContentLoaded", start);

// A session: its invocations, newest first, refreshed as the session's events arrive.

import { call, describe, keepReading } from "./api.js";
import { dateTime, duration, h, notice, pill } from "./dom.js";

const PAGE_SIZE = 50;
const REPLAY_MS = 60_000; // start the live stream a minute back: a slow browser clock then misses nothing

/** Render session ``sid`` of ``user`` in ``app`` into ``root``; returns a function that stops it. */
export function sessionView(root, app, user, sid) {
  const stop = new AbortController();
  const base = `/apps/${encodeURIComponent(app)}/users/${encodeURIComponent(user)}`;
  const rows = h("tbody", {});
  const problem = h("div", {});
  const more = h("button", { type: "button", hidden: true, onclick: () => load(true) }, "Load more");
  const live = h("div", { class: "live" });
  root.replaceChildren(
    h("div", { class: "title" }, h("h1", {}, "Session ", h("code", {}, sid)), live),
    h("p", { class: "muted" }, `agent ${app} · user ${user}`),
    problem,
    h("table", { class: "invocations" },
      h("thead", {}, h("tr", {}, ["invocation", "status", "created", "took", "waiting on"].map((t) => h("th", {}, t)))),
      rows),
    more);
  let token = null;

  async function load(next = false) {
    const query = new URLSearchParams({ sessionId: sid, limit: String(PAGE_SIZE) });
    if (next && token) query.set("pageToken", token);
    try {
      const page = await call("GET", `${base}/invocations?${query}`, undefined, { signal: stop.signal });
      token = page.nextPageToken;
      more.hidden = !token;
      const items = page.invocations.map(row);
      next ? rows.append(...items) : rows.replaceChildren(...items);
      if (!rows.children.length) rows.append(h("tr", {}, h("td", { colspan: "5" }, "No invocations yet.")));
      problem.replaceChildren();
    } catch (error) {
      if (!stop.signal.aborted) problem.replaceChildren(notice("error", describe(error)));
    }
  }

  let pending = null;
  const soon = (frame) => {
    if (frame?.event === "status") window.dispatchEvent(new Event("agentq:changed")); // the header's counts
    clearTimeout(pending);
    pending = setTimeout(() => load(), 200);
  };
  keepReading(`${base}/sessions/${encodeURIComponent(sid)}/events?after=${Date.now() - REPLAY_MS}-0`, soon, {
    signal: stop.signal,
    onTrouble: (error) => live.replaceChildren(h("span", { class: `dot ${error ? "off" : "on"}` }),
      error ? `live updates interrupted: ${describe(error)}` : "live"),
  });
  live.replaceChildren(h("span", { class: "dot on" }), "live");
  load();
  return () => { clearTimeout(pending); stop.abort(); };
}

function row(invocation) {
  const id = invocation.invocationId;
  const took = invocation.finishedAt ? duration((invocation.finishedAt - invocation.createdAt) * 1000) : "";
  return h("tr", { dataset: { invocation: id } },
    h("td", {}, h("a", { href: `#/invocations/${encodeURIComponent(id)}` }, id)),
    h("td", {}, pill(invocation.status)),
    h("td", {}, invocation.createdAt ? dateTime(invocation.createdAt * 1000) : ""),
    h("td", {}, took),
    h("td", {}, invocation.pendingCalls.map((c) => c.originalCall?.name || c.name).join(", ")));
}

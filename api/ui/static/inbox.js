// The inbox: every invocation waiting on a person that the key may see, newest first, live: the page follows
// /inbox/events (the API's change feed) and reads its list again only when something it may see changed.

import { FINAL, call, describe, followInvocation, keepReading } from "./api.js";
import { pendingCall } from "./calls.js";
import { h, notice, pill, since } from "./dom.js";

const PAGE_SIZE = 20;
const answeredHere = new Map(); // invocation id -> {label, what, status, text}: kept while the tab lives

/** Render the inbox into ``root``; returns a function that stops its streams. */
export function inboxView(root, params) {
  const stop = new AbortController();
  const filters = { app: params.get("app") || "", user: params.get("user") || "" };
  const tokens = [null];
  let page = 0;
  const cards = new Map();

  const count = h("span", { class: "count" });
  const live = h("div", { class: "live" });
  const list = h("ol", { class: "inbox-list" });
  const problem = h("div", {});
  const answered = h("ul", { class: "answered-list" });
  const answeredBox = h("section", { class: "answered", hidden: true }, h("h2", {}, "Answered here"), answered);
  const older = h("button", { type: "button", onclick: () => { page += 1; refresh(); } }, "Older →");
  const newer = h("button", { type: "button", onclick: () => { page -= 1; refresh(); } }, "← Newer");
  const pageLabel = h("span", {});
  root.replaceChildren(
    h("div", { class: "title" }, h("h1", {}, "Inbox"), count, live),
    filterForm(filters), answeredBox, problem, list,
    h("nav", { class: "pager" }, newer, pageLabel, older));

  let loading = null;
  let again = false;
  // One read of the list at a time; changes that arrive meanwhile ask for one more after it.
  async function refresh() {
    if (loading) { again = true; return; }
    again = false;
    loading = load();
    try { await loading; } finally { loading = null; }
    if (again) refresh();
  }

  async function load() {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (filters.app) query.set("app", filters.app);
    if (filters.user) query.set("user", filters.user);
    if (tokens[page]) query.set("pageToken", tokens[page]);
    try {
      const result = await call("GET", `/inbox?${query}`, undefined, { signal: stop.signal });
      tokens[page + 1] = result.nextPageToken;
      problem.replaceChildren();
      show(result);
    } catch (error) {
      if (!stop.signal.aborted) problem.replaceChildren(notice("error", describe(error)));
    }
  }

  function show(result) {
    count.textContent = `${result.total} waiting`;
    const seen = new Set();
    const items = result.invocations.map((invocation) => {
      const key = `${invocation.invocationId} ${invocation.pendingCalls.map((c) => c.id).join(",")}`;
      seen.add(key);
      if (!cards.has(key)) cards.set(key, card(invocation, remember));
      return cards.get(key);
    });
    for (const key of [...cards.keys()]) if (!seen.has(key)) cards.delete(key);
    list.replaceChildren(...items);
    if (!items.length) list.append(h("li", { class: "empty" }, page ? "No older items." : "Nothing is waiting for you."));
    newer.disabled = page === 0;
    older.disabled = !result.nextPageToken;
    pageLabel.textContent = `page ${page + 1}`;
  }

  function remember(invocation, label) {
    const original = invocation.pendingCalls[0]?.originalCall;
    answeredHere.set(invocation.invocationId, {
      label, what: original ? `${original.name}(${JSON.stringify(original.args)})` : invocation.pendingCalls[0]?.name,
      status: "queued", text: "",
    });
    follow(invocation.invocationId);
  }

  function follow(id) {
    const entry = answeredHere.get(id);
    renderAnswered();
    if (FINAL.has(entry.status)) return;
    followInvocation(id, {
      signal: stop.signal,
      onFrame: (frame) => {
        if (frame.event === "status") entry.status = frame.data.status;
        const parts = frame.data?.content?.parts || [];
        const text = parts.map((p) => p.text || "").join("");
        if (frame.event === "message" && !frame.data.partial && frame.data.author !== "user" && text) entry.text = text;
        renderAnswered();
      },
      onRecord: (record) => { entry.status = record.status; renderAnswered(); },
    });
  }

  const lines = new Map(); // invocation id -> {li, status, reply}: updated in place, so a line never flickers
  function renderAnswered() {
    answeredBox.hidden = answeredHere.size === 0;
    for (const [id, entry] of answeredHere) {
      if (!lines.has(id)) {
        const line = { status: h("span", {}), reply: h("q", { hidden: true }) };
        line.li = h("li", { dataset: { invocation: id } }, h("a", { href: `#/invocations/${encodeURIComponent(id)}` }, id),
          " ", entry.label, " ", h("code", {}, entry.what || ""), " ", line.status, line.reply);
        lines.set(id, line);
        answered.prepend(line.li);
      }
      const line = lines.get(id);
      if (line.status.textContent !== entry.status) line.status.replaceChildren(pill(entry.status));
      line.reply.hidden = !entry.text;
      line.reply.textContent = entry.text;
    }
  }

  for (const id of answeredHere.keys()) follow(id);
  const eventsQuery = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
  let first = true;
  keepReading(`/inbox/events?${eventsQuery}`, (frame) => {
    if (frame.event !== "inbox") return;
    live.replaceChildren(h("span", { class: "dot on" }), "live");
    // The first frame of the first connection comes with the first read below; every later one (changes, a
    // reload, or the first frame after a reconnect, which may follow missed changes) reads the list again.
    if (!first) {
      window.dispatchEvent(new Event("agentq:changed")); // the header's counts follow the inbox
      refresh();
    }
    first = false;
  }, {
    signal: stop.signal,
    onTrouble: (error) => {
      if (error) live.replaceChildren(h("span", { class: "dot off" }), `live updates interrupted: ${describe(error)}`);
    },
  });
  refresh();
  return () => stop.abort();
}

function filterForm(filters) {
  const app = h("select", { name: "app" }, h("option", { value: "" }, "all apps"));
  const user = h("input", { name: "user", type: "text", placeholder: "all users", value: filters.user });
  call("GET", "/list-apps").then((apps) => {
    app.append(...apps.map((name) => h("option", { value: name, selected: name === filters.app }, name)));
  }).catch(() => {});
  const go = (values) => {
    const query = new URLSearchParams(Object.entries(values).filter(([, v]) => v));
    location.hash = `#/inbox${String(query) ? `?${query}` : ""}`;
  };
  return h("form", {
    class: "filters",
    onsubmit: (event) => { event.preventDefault(); go({ app: app.value, user: user.value.trim() }); },
  }, h("label", {}, "App ", app), h("label", {}, "User ", user), h("button", { type: "submit" }, "Filter"),
  h("button", { type: "button", class: "plain", onclick: () => go({}) }, "Clear"));
}

function card(invocation, remember) {
  const id = invocation.invocationId;
  const session = `#/sessions/${[invocation.appName, invocation.userId, invocation.sessionId].map(encodeURIComponent).join("/")}`;
  const waitingSince = (invocation.updatedAt || invocation.createdAt) * 1000;
  return h("li", { class: "item", dataset: { invocation: id } },
    h("header", {},
      h("span", { class: "agent", title: "agent (app)" }, invocation.appName),
      h("span", { class: "who" }, "user ", h("strong", {}, invocation.userId)),
      h("span", {}, "session ", h("a", { href: session }, invocation.sessionId)),
      h("a", { class: "inv", href: `#/invocations/${encodeURIComponent(id)}` }, id),
      since(waitingSince, "waiting ")),
    invocation.pendingCalls.map((pending) => pendingCall(invocation, pending, {
      onAnswered: (label) => remember(invocation, label),
    })));
}

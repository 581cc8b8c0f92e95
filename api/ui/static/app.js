// The page: asks for a key when the API wants one, shows operations at a glance, routes #fragments to views.

import { ApiError, auth, call, describe } from "./api.js";
import { h, notice, tick } from "./dom.js";
import { inboxView } from "./inbox.js";
import { invocationView } from "./invocation.js";
import { sessionView } from "./session.js";

const SUMMARY_EVERY_MS = 5000;
const view = document.getElementById("view");
const ops = document.getElementById("ops");
const banner = document.getElementById("banner");
const keyBox = document.getElementById("key");
let dispose = () => {};
let asking = false;

function route() {
  dispose();
  dispose = () => {};
  if (asking) return;
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "invocations" && parts[1]) dispose = invocationView(view, parts[1]);
  else if (parts[0] === "sessions" && parts.length === 4) dispose = sessionView(view, parts[1], parts[2], parts[3]);
  else dispose = inboxView(view, new URLSearchParams(query));
}

function askForKey(message) {
  if (asking) return;
  asking = true;
  dispose();
  dispose = () => {};
  const input = h("input", { type: "password", id: "api-key", name: "key", autocomplete: "off", required: true });
  const problem = h("div", {}, message ? notice("error", message) : null);
  view.replaceChildren(h("form", {
    class: "key-form",
    onsubmit: async (event) => {
      event.preventDefault();
      auth.key = input.value.trim();
      try {
        auth.me = await call("GET", "/me");
      } catch (error) {
        problem.replaceChildren(notice("error", describe(error)));
        return;
      }
      asking = false;
      operator = true; // a new key: it may have the operate role
      showKey();
      refreshSummary();
      route();
    },
  }, h("h1", {}, "Sign in"),
  h("p", {}, "This agentq API needs an API key or a bearer token (OIDC). The page only shows what it may see and "
    + "answer; it stays in this tab."),
  h("label", {}, "API key or token ", input), problem, h("button", { type: "submit" }, "Use this key")));
  input.focus();
}

function showKey() {
  const who = auth.me ? `signed in as ${auth.me.principalId} (${auth.me.roles.join(", ")}) · ` : "";
  keyBox.replaceChildren(...(auth.key ? [`${who}key …${auth.key.slice(-4)} `, h("button", {
    type: "button", class: "plain", onclick: () => { auth.key = ""; auth.me = null; showKey(); askForKey(); },
  }, "Forget key")] : []));
}

let summarizing = false;
let summaryAgain = false;
let operator = true; // false once /ops/summary answered 403: this key has no figures to show, so none are read
// The header's figures are read again when a view saw something change (an inbox change, a status frame of
// an invocation or session), one read at a time. Queued work and workers coming and going reach no page's
// stream, so for a key with the operate role, while the tab is visible, they are also read every
// SUMMARY_EVERY_MS (counters, O(1) for Redis); an approver's key (no operate role) reads them never.
async function refreshSummary() {
  if (summarizing) { summaryAgain = true; return; }
  summarizing = true;
  summaryAgain = false;
  try { await readSummary(); } finally { summarizing = false; }
  if (summaryAgain) refreshSummary();
}

async function readSummary() {
  if (asking) return;
  try {
    const summary = await call("GET", "/ops/summary");
    const counts = Object.entries(summary.counts).map(([status, n]) => h("span", { class: `count status-${status}` },
      h("b", {}, String(n)), ` ${status}`));
    ops.replaceChildren(...counts, h("span", { class: "count" }, h("b", {}, String(summary.queueDepth)), " in queue"),
      h("span", { class: `count ${summary.workersAlive ? "" : "bad"}` }, h("b", {}, String(summary.workersAlive)),
        ` worker${summary.workersAlive === 1 ? "" : "s"} alive`));
    banner.hidden = summary.workersAlive > 0;
    banner.textContent = "No worker is alive: queued and answered invocations wait until a worker runs "
      + "(start one with: agentq worker --app module:app).";
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return;
    if (error instanceof ApiError && error.status === 403) { // no 'operate' role: no figures to show
      operator = false;
      ops.replaceChildren();
      banner.hidden = true;
      return;
    }
    banner.hidden = false;
    banner.textContent = `Operations summary unavailable: ${describe(error)}`;
  }
}

auth.onUnauthorized = () => askForKey(auth.key ? "This key is not accepted: enter a valid API key." : null);
window.addEventListener("hashchange", route);
window.addEventListener("agentq:changed", () => refreshSummary());
window.addEventListener("hashchange", () => refreshSummary());
document.addEventListener("visibilitychange", () => { if (!document.hidden) refreshSummary(); });
setInterval(tick, 1000); // the "waiting 3 min" labels: the browser's clock only, no request
setInterval(() => { if (operator && !document.hidden) refreshSummary(); }, SUMMARY_EVERY_MS);
showKey();
(async () => {
  try {
    auth.me = await call("GET", "/me");
    showKey();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return; // askForKey is showing
  }
  refreshSummary();
  route();
})();

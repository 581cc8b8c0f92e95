// An invocation: where it stands, a workflow's node runs, what it waits for, cancel, and its timeline (live
// until it is final).

import { FINAL, call, describe, followInvocation } from "./api.js";
import { argsTable, pendingCall } from "./calls.js";
import { clock, dateTime, duration, h, json, notice, pill } from "./dom.js";
import { workflowSection } from "./nodes.js";

const STALE_STREAM_MS = 2500; // a final invocation whose stream entries expired: use the session's history
const NODES_AFTER_MS = 100; // a burst of events (a fan-out) asks for the node runs once

/** Render invocation ``id`` into ``root``; returns a function that stops following it. */
export function invocationView(root, id) {
  const stop = new AbortController();
  const rows = [];
  const summary = h("div", { class: "summary" });
  const pending = h("div", { class: "pending" });
  const workflow = h("section", { class: "workflow", hidden: true });
  const timeline = h("tbody", {});
  const live = h("div", { class: "live" });
  const problem = h("div", {});
  root.replaceChildren(
    h("div", { class: "title" }, h("h1", {}, "Invocation ", h("code", {}, id)), live),
    problem, summary, workflow, pending,
    h("h2", {}, "Timeline"),
    h("table", { class: "timeline" },
      h("thead", {}, h("tr", {}, h("th", {}, "time"), h("th", {}, "+"), h("th", {}, "what"), h("th", {}, "details"))),
      timeline));
  let record = null;
  let nodes = [];
  const cards = new Map(); // call id -> its card: kept across renders, so a half-filled form survives them

  function showRecord(next) {
    record = next;
    const session = [next.appName, next.userId, next.sessionId].map(encodeURIComponent).join("/");
    summary.replaceChildren(h("dl", {},
      h("dt", {}, "status"), h("dd", {}, pill(next.status)),
      h("dt", {}, "agent"), h("dd", {}, next.appName),
      h("dt", {}, "user"), h("dd", {}, next.userId),
      h("dt", {}, "session"), h("dd", {}, h("a", { href: `#/sessions/${session}` }, next.sessionId)),
      h("dt", {}, "created"), h("dd", {}, next.createdAt ? dateTime(next.createdAt * 1000) : "?"),
      next.finishedAt ? [h("dt", {}, "took"), h("dd", {}, duration((next.finishedAt - next.createdAt) * 1000))] : null,
      next.error ? [h("dt", {}, "error"), h("dd", { class: "error-text" }, `${next.error.type}: ${next.error.message}`)] : null,
      next.cancelReason ? [h("dt", {}, "cancelled"), h("dd", {}, next.cancelReason)] : null));
    if (!FINAL.has(next.status)) summary.append(cancelForm());
    showCalls();
  }

  // A card is kept per node run and call id: a review loop asks every run with the same interrupt id, and the
  // card of the run answered before (its form sent, its outcome shown) is not the next run's.
  const cardKey = (callId, askedBy) => JSON.stringify([askedBy || "", callId]);

  function cardFor(callId, askedBy) {
    const waiting = record?.status === "parked" && record.pendingCalls.find((c) => c.id === callId);
    if (!waiting) return null;
    const key = cardKey(callId, askedBy);
    if (!cards.has(key)) cards.set(key, pendingCall(record, waiting, { onAnswered: refresh }));
    return cards.get(key);
  }

  function showCalls() {
    const waiting = new Set(record.status === "parked" ? record.pendingCalls.map((c) => c.id) : []);
    const asked = new Set([...waiting].map((callId) => cardKey(callId)));
    for (const node of nodes) for (const callId of node.waitingOn) asked.add(cardKey(callId, node.path));
    for (const key of [...cards.keys()]) if (!asked.has(key) || !waiting.has(JSON.parse(key)[1])) cards.delete(key);
    // A call a workflow node waits on is answered in that node; the others in the list below.
    const inNodes = new Set(nodes.flatMap((n) => n.waitingOn));
    const section = workflowSection(nodes, cardFor);
    workflow.hidden = !section;
    workflow.replaceChildren(...(section || []));
    const rest = record.status === "parked" ? record.pendingCalls.filter((c) => !inNodes.has(c.id)) : [];
    pending.replaceChildren(...(rest.length ? [h("h2", {}, "Waiting for an answer"), ...rest.map((c) => cardFor(c.id))] : []));
  }

  let asking = null;
  let again = false;
  let soon = null;
  function refreshNodes() {
    // one request at a time; frames that arrive meanwhile ask once more after it
    clearTimeout(soon);
    soon = setTimeout(async () => {
      if (asking) { again = true; return; }
      again = false;
      asking = call("GET", `/invocations/${encodeURIComponent(id)}/nodes`, undefined, { signal: stop.signal });
      try {
        nodes = (await asking).nodes;
        if (record) showCalls();
      } catch (error) {
        if (!stop.signal.aborted) problem.replaceChildren(notice("error", describe(error)));
      } finally {
        asking = null;
        if (again) refreshNodes();
      }
    }, NODES_AFTER_MS);
  }

  function cancelForm() {
    const reason = h("input", { type: "text", name: "reason", placeholder: "reason (optional)" });
    const result = h("span", {});
    return h("form", {
      class: "cancel",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const body = reason.value.trim() ? { reason: reason.value.trim() } : {};
          showRecord(await call("POST", `/invocations/${encodeURIComponent(id)}/cancel`, body));
        } catch (error) {
          const settled = error.status === 409 && `It cannot be cancelled any more (${error.detail}).`;
          result.replaceChildren(notice(settled ? "conflict" : "error", settled || describe(error)));
        }
      },
    }, reason, h("button", { type: "submit", class: "reject" }, "Cancel invocation"), result);
  }

  async function refresh() {
    try {
      showRecord(await call("GET", `/invocations/${encodeURIComponent(id)}`, undefined, { signal: stop.signal }));
    } catch (error) {
      if (!stop.signal.aborted) problem.replaceChildren(notice("error", describe(error)));
    }
  }

  function add(frame) {
    const row = frame.event === "status" ? statusRow(frame) : eventRows(frame.data, entryTime(frame.id));
    rows.push(...row);
    renderTimeline(timeline, rows);
    if (frame.event === "status") {
      refresh();
      window.dispatchEvent(new Event("agentq:changed")); // the header's counts
    }
    refreshNodes();
  }

  (async () => {
    await refresh();
    if (!record) return;
    refreshNodes();
    let lastFrame = Date.now();
    let sawFinal = false;
    const follower = new AbortController();
    const watch = FINAL.has(record.status) && setInterval(() => {
      if (!sawFinal && Date.now() - lastFrame > STALE_STREAM_MS) {
        clearInterval(watch);
        follower.abort();
        fromHistory(record, rows, timeline);
      }
    }, 500);
    stop.signal.addEventListener("abort", () => { follower.abort(); clearInterval(watch); });
    live.replaceChildren(h("span", { class: "dot on" }), "live");
    await followInvocation(id, {
      signal: follower.signal,
      onFrame: (frame) => {
        lastFrame = Date.now();
        if (frame.event === "status" && FINAL.has(frame.data.status)) sawFinal = true;
        add(frame);
      },
      onRecord: showRecord,
      onTrouble: (error) => live.replaceChildren(h("span", { class: `dot ${error ? "off" : "on"}` }),
        error ? `live updates interrupted: ${describe(error)}` : "live"),
    });
    clearInterval(watch);
    live.replaceChildren(h("span", { class: "dot done" }), "final");
  })();
  return () => { clearTimeout(soon); stop.abort(); };
}

function statusRow(frame) {
  const { status, detail = {} } = frame.data;
  const calls = (detail.pendingCalls || []).length;
  const words = {
    queued: detail.resumed ? `again, after an answer${byWhom(detail.answeredBy)}` : "",
    parked: `waiting on ${calls || "a"} call${calls > 1 ? "s" : ""}`,
    cancelled: detail.cancelledBy ? `by ${actorName(detail.cancelledBy)}` : "",
  };
  const more = detail.error ? `${detail.error.type}: ${detail.error.message}` : detail.reason || "";
  return [{ at: entryTime(frame.id), status, what: words[status] || "", details: more }];
}

// Who answered or cancelled (worker.records.audit): the principal, and the client address it came from.
const actorName = (actor) => `${actor.principal}${actor.client ? ` from ${actor.client}` : ""}`;
const byWhom = (actor) => (actor ? ` by ${actorName(actor)}` : "");

// Stream entry ids start with the Redis server's clock (ms): one clock for every row, in commit order.
const entryTime = (id) => Number(String(id).split("-")[0]);

/** A path segment as a person reads it: "review" for its first run, "review #2" for the second. */
function runName(segment) {
  const [name, run] = segment.split("@");
  return run && run !== "1" ? `${name} #${run}` : name;
}

/** Timeline rows of a committed event, at ``at`` ms (default: the event's own timestamp). */
function eventRows(event, at = event?.timestamp * 1000) {
  if (!event || event.partial) return [];
  const path = event.nodeInfo?.path;
  const node = path ? (path.split("/").slice(1).map(runName).join("/") || runName(path)) : "";
  const who = event.author === "user" ? "user" : node ? `${event.author} › ${node}` : event.author;
  const attempt = path && event.actions?.agentState?.["agentq:node_attempt"];
  if (attempt) return [{ at, what: `${who}: attempt ${attempt} begins`, details: "" }];
  const rows = [];
  if (path && event.errorCode) {
    rows.push({ at, what: `${who} failed`, details: h("span", { class: "error-text" }, `${event.errorCode}: ${event.errorMessage || ""}`) });
  }
  if (path && event.output !== undefined && event.output !== null) {
    rows.push({ at, what: `${who} output`, details: h("pre", {}, json(event.output)) });
  }
  return rows.concat((event.content?.parts || []).map((part) => {
    if (part.functionCall) {
      const c = part.functionCall;
      return { at, callId: c.id, who, what: `${who} calls ${c.name}`, details: argsTable(c.args) };
    }
    if (part.functionResponse) {
      const r = part.functionResponse;
      const by = byWhom(event.customMetadata?.["agentq:answered_by"]?.[r.id]);
      return { at, answers: r.id, what: `${r.name} answered${by}`, details: h("pre", {}, json(r.response)) };
    }
    if (part.text) return { at, what: who === "user" ? "user message" : `${who} says`, details: part.text };
    return null;
  }).filter(Boolean));
}

/** Each answer row's call row: the k-th answer to a call id answers the k-th call with that id (a review loop
 * asks every run with the same interrupt id), as the workers pair them (runtime/workflow/history.py). */
function pairAnswers(rows) {
  const asked = new Map(); // call id -> its call rows not answered yet, oldest first
  const calls = new Map(); // answer row -> call row
  for (const row of rows) {
    if (row.callId) {
      if (!asked.has(row.callId)) asked.set(row.callId, []);
      asked.get(row.callId).push(row);
    } else if (row.answers && asked.get(row.answers)?.length) {
      calls.set(row, asked.get(row.answers).shift());
    }
  }
  return calls;
}

function renderTimeline(body, rows) {
  const calls = pairAnswers(rows);
  const statuses = rows.filter((r) => r.status);
  body.replaceChildren(...rows.map((row, i) => {
    const notes = [];
    const call = calls.get(row);
    if (call) notes.push(`for ${call.who}`, `took ${duration(row.at - call.at)}`);
    if (row.status && !FINAL.has(row.status)) {
      const next = statuses[statuses.indexOf(row) + 1];
      notes.push(next ? `for ${duration(next.at - row.at)}` : "so far");
    }
    return h("tr", { class: row.status ? `status status-${row.status}` : "event" },
      h("td", { class: "time" }, clock(row.at)),
      h("td", { class: "delta" }, i ? `+${duration(row.at - rows[i - 1].at)}` : ""),
      h("td", {}, row.status ? pill(row.status) : null, " ", row.what, notes.length ? h("small", {}, ` (${notes.join(", ")})`) : null),
      h("td", {}, row.details));
  }));
}

async function fromHistory(record, rows, body) {
  // The stream entries of an old invocation were trimmed: its committed events are still in the session.
  try {
    const [app, user, sid] = [record.appName, record.userId, record.sessionId].map(encodeURIComponent);
    const session = await call("GET", `/apps/${app}/users/${user}/sessions/${sid}`);
    const events = session.events.filter((e) => e.invocationId === record.invocationId);
    rows.splice(0, rows.length, ...events.flatMap((event) => eventRows(event)));
    rows.push({ at: record.finishedAt * 1000, status: record.status, what: "", details: "" });
    renderTimeline(body, rows);
  } catch (error) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: "4" }, describe(error))));
  }
}

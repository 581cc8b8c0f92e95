// Talking to the agentq API: the key, JSON calls, errors in words, and SSE read with fetch (so the key can
// travel in the Authorization header, which EventSource cannot send).

const KEY = "agentq.apiKey";
export const FINAL = new Set(["completed", "failed", "cancelled"]);

export const auth = {
  get key() { return sessionStorage.getItem(KEY) || ""; },
  set key(value) { value ? sessionStorage.setItem(KEY, value) : sessionStorage.removeItem(KEY); },
  onUnauthorized: () => {},
};

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.detail || `HTTP ${status}`);
    this.status = status;
    this.error = body?.error || "";
    this.detail = body?.detail || "";
  }
}

function headers(extra = {}) {
  const result = { ...extra };
  if (auth.key) result.Authorization = `Bearer ${auth.key}`;
  return result;
}

async function failure(response) {
  let body = null;
  try { body = await response.json(); } catch { /* not JSON: the status says enough */ }
  const error = new ApiError(response.status, body);
  if (response.status === 401) auth.onUnauthorized(error);
  return error;
}

/** A JSON request; resolves to the parsed body, rejects with an ApiError (or a TypeError when offline). */
export async function call(method, path, body, { signal } = {}) {
  const init = { method, signal, cache: "no-store", headers: headers({ Accept: "application/json" }) };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

/** What went wrong, in words a person can act on. */
export function describe(error) {
  if (error instanceof ApiError) {
    const detail = error.detail ? ` (${error.detail})` : "";
    switch (error.status) {
      case 401: return "This key is not accepted: enter a valid API key.";
      case 403: return `The API refused this page${detail}.`;
      case 404: return `Not found: it does not exist, or this key may not see it${detail}.`;
      case 409: return `Already answered elsewhere: this call is no longer waiting for an answer${detail}.`;
      case 400: case 422: return `The answer was refused${detail}.`;
      case 413: return "The answer is too large.";
      case 503: return `The service is unavailable right now; try again in a moment${detail}.`;
      default: return `The API answered ${error.status}${detail}.`;
    }
  }
  if (error?.name === "AbortError") return "Stopped.";
  return "Cannot reach the agentq API: check the network or that the server is running.";
}

// A page the person is not looking at holds no stream open. Over HTTP/1.1 a browser opens at most 6 connections
// to one host, and every open page keeps one stream: a page left for the back-forward cache keeps its stream
// too, so after a few pages visited in one tab (or a few tabs) the next page's requests queued behind them for
// about a minute. So a stream is closed when its page is put away (pagehide) or its tab hidden, and opened again
// when the page shows (pageshow, from the cache or not; visibilitychange): the views' loops below resume where
// they were (an invocation after its last entry, the inbox reads its list again). Closing per page, rather than
// sharing one stream between tabs (BroadcastChannel, SharedWorker), because each tab follows its own view with
// its own key (sessionStorage is per tab): there is no one stream to share, and a hidden tab needs none.
const presence = { away: false, closing: new AbortController(), waiting: [] };

function putAway() {
  if (presence.away) return;
  presence.away = true;
  presence.closing.abort();
}

function bringBack() {
  if (!presence.away) return;
  presence.away = false;
  presence.closing = new AbortController();
  presence.waiting.splice(0).forEach((wake) => wake());
}

window.addEventListener("pagehide", putAway);
window.addEventListener("pageshow", () => { if (!document.hidden) bringBack(); });
document.addEventListener("visibilitychange", () => (document.hidden ? putAway() : bringBack()));

/** Resolves once the page is shown (at once when it is), or when ``signal`` aborts. */
function shown(signal) {
  if (!presence.away || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    presence.waiting.push(resolve);
    signal?.addEventListener("abort", resolve, { once: true });
  });
}

/** True when ``error`` is a stream closed because its page was put away (not a failure to report). */
const putAwayError = (error, signal) => error?.name === "AbortError" && !signal.aborted;

/** An AbortSignal that aborts with either of two. */
function either(one, other) {
  if (AbortSignal.any) return AbortSignal.any([one, other]);
  const both = new AbortController();
  for (const signal of [one, other]) signal.addEventListener("abort", () => both.abort(), { once: true });
  if (one.aborted || other.aborted) both.abort();
  return both.signal;
}

/** Read an SSE route, calling onFrame({id, event, data}) per frame, until the server ends the stream (or the
 * page is put away: it then rejects with an AbortError while ``signal`` is not aborted). */
export async function stream(path, onFrame, signal) {
  await shown(signal);
  if (signal.aborted) throw new DOMException("stopped", "AbortError");
  const response = await fetch(path, { signal: either(signal, presence.closing.signal), cache: "no-store",
    headers: headers({ Accept: "text/event-stream" }) });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return; // nothing more will come (resumed after a final invocation's last entry)
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = parseFrame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (frame) onFrame(frame);
    }
  }
}

function parseFrame(text) {
  const frame = { id: null, event: "message", data: "" };
  const data = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") frame.id = value;
    else if (field === "event") frame.event = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return null;
  try { frame.data = JSON.parse(data.join("\n")); } catch { frame.data = data.join("\n"); }
  return frame;
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
});

/**
 * Follow an invocation until it is final: its frames (replayed from its first entry) go to onFrame, its
 * record to onRecord after each settle. Reconnects after a dropped connection, resuming after the last entry.
 * onTrouble(error|null) reports a broken connection (and its end).
 */
export async function followInvocation(id, { onFrame, onRecord, onTrouble = () => {}, signal }) {
  let after = null;
  let delay = 500;
  while (!signal.aborted) {
    try {
      const query = after ? `?after=${encodeURIComponent(after)}` : "";
      await stream(`/invocations/${encodeURIComponent(id)}/events${query}`, (frame) => {
        if (frame.id) after = frame.id;
        onFrame(frame);
      }, signal);
      const record = await call("GET", `/invocations/${encodeURIComponent(id)}`, undefined, { signal });
      onTrouble(null);
      delay = 500;
      onRecord(record);
      if (FINAL.has(record.status)) return record;
    } catch (error) {
      if (signal.aborted) return null;
      if (putAwayError(error, signal)) continue; // reopened (after its last entry) once the page shows
      onTrouble(error);
      if (error instanceof ApiError && [401, 404].includes(error.status)) return null;
      await sleep(delay, signal);
      delay = Math.min(delay * 2, 10_000);
    }
  }
  return null;
}

/** Keep reading an SSE route that never ends on its own (reconnecting after failures) until aborted. */
export async function keepReading(path, onFrame, { onTrouble = () => {}, signal }) {
  let delay = 500;
  while (!signal.aborted) {
    try {
      await stream(path, (frame) => { onTrouble(null); delay = 500; onFrame(frame); }, signal);
    } catch (error) {
      if (signal.aborted) return;
      if (putAwayError(error, signal)) continue; // reopened once the page shows
      onTrouble(error);
      if (error instanceof ApiError && error.status === 401) return;
    }
    await sleep(delay, signal);
    delay = Math.min(delay * 2, 10_000);
  }
}

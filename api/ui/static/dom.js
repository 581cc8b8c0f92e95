// Building elements (text is always set as text, never parsed as HTML) and formatting times.

/** h("a", {href, class, onclick, dataset: {...}}, child, ...): an element; children are nodes or strings. */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Pretty JSON for a <pre>. */
export const json = (value) => JSON.stringify(value, null, 2);

/** "1.2 s", "3 min 12 s", "2 h 5 min", "3 d 4 h". */
export function duration(ms) {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(s < 1 ? 2 : 1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.floor(s % 60)} s`;
  const hours = Math.floor(m / 60);
  if (hours < 24) return `${hours} h ${m % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

const pad = (n, width = 2) => String(n).padStart(width, "0");

/** "14:03:07.250" (local time). */
export function clock(ms) {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** "2025-03-01 14:03" (local time). */
export function dateTime(ms) {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** An element whose text says how long ago ``sinceMs`` was, kept current by tick(). */
export function since(sinceMs, prefix = "") {
  return h("span", { class: "since", dataset: { since: String(sinceMs), prefix } }, prefix + duration(Date.now() - sinceMs));
}

/** A deadline: "answer by 2025-03-01 14:03 (in 23 h 59 min)", kept current by tick(). */
export function deadline(deadlineMs) {
  if (!deadlineMs) return h("span", { class: "deadline none" }, "no deadline");
  return h("span", { class: "deadline", dataset: { deadline: String(deadlineMs) } }, deadlineText(deadlineMs));
}

function deadlineText(ms) {
  const left = ms - Date.now();
  return `answer by ${dateTime(ms)} (${left > 0 ? `in ${duration(left)}` : "passed"})`;
}

/** Refresh every "since" and "deadline" element on the page (called once a second). */
export function tick() {
  for (const node of document.querySelectorAll("[data-since]")) {
    node.textContent = node.dataset.prefix + duration(Date.now() - Number(node.dataset.since));
  }
  for (const node of document.querySelectorAll("[data-deadline]")) {
    node.textContent = deadlineText(Number(node.dataset.deadline));
  }
}

/** A status pill. */
export const pill = (status) => h("span", { class: `pill status-${status}` }, status);

/** A one-line message area for results and errors (role=status, or alert for problems). */
export function notice(kind, text) {
  return h("p", { class: `notice ${kind}`, role: kind === "error" || kind === "conflict" ? "alert" : "status" }, text);
}

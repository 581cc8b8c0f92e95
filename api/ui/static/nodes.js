// A workflow invocation's node runs (GET /invocations/{id}/nodes, derived by api/views/workflow_nodes.py): each run
// with where it stands, nested under its workflow, and the answer form of a run waiting for a person.

import { h } from "./dom.js";

export const NODE_STATUS = {
  done: "done", running: "running", waiting: "waiting for a person", failed: "failed", retrying: "retrying",
  stopped: "stopped",
};
const ORDER = ["waiting", "failed", "retrying", "running", "stopped", "done"];
const MANY = 12; // a run with more nodes than this (a fan-out over items) shows them folded under their counts

/** The section for ``nodes`` (none: null); cardFor(callId, path) gives the answer card of
 * a pending call that node run ``path`` made, or null. */
export function workflowSection(nodes, cardFor) {
  if (!nodes.length) return null;
  const children = new Map();
  for (const node of nodes) {
    if (!children.has(node.parent)) children.set(node.parent, []);
    children.get(node.parent).push(node);
  }
  const list = (items) => h("ol", { class: "nodes" }, items.map((node) => item(node, children, cardFor)));
  return [h("h2", {}, "Workflow ", h("span", { class: "count" }, counts(nodes.filter((n) => n.parent)))),
    list(children.get(null) || [])];
}

function item(node, children, cardFor) {
  const below = children.get(node.path) || [];
  const nested = h("ol", { class: "nodes" }, below.map((child) => item(child, children, cardFor)));
  return h("li", { class: `node node-${node.status}`, dataset: { path: node.path, status: node.status } },
    h("div", { class: "node-line" },
      h("span", { class: `pill node-status node-${node.status}` }, NODE_STATUS[node.status] || node.status),
      h("b", { class: "node-name" }, node.name), node.run !== "1" ? h("span", { class: "muted" }, ` #${node.run}`) : null,
      node.attempts > 1 ? h("span", { class: "attempts" }, `attempt ${node.attempts}`) : null,
      node.output != null && node.status === "done" ? h("code", { class: "node-output", title: node.output }, `→ ${node.output}`) : null,
      h("code", { class: "node-path" }, node.path)),
    node.error && node.status !== "stopped" ? h("div", { class: node.status === "failed" ? "node-error error-text" : "node-error" },
      node.status === "failed" ? "failed: " : "an attempt failed: ", `${node.error.type}: ${node.error.message}`) : null,
    node.waitingOn.map((id) => cardFor(id, node.path) || h("p", { class: "muted" }, `waiting on call ${id}`)),
    below.length > MANY ? h("details", { class: "many" }, h("summary", {}, `${below.length} runs: ${counts(below)}`), nested)
      : below.length ? nested : null);
}

/** "3 done · 1 waiting for a person". */
function counts(nodes) {
  const by = new Map();
  for (const node of nodes) by.set(node.status, (by.get(node.status) || 0) + 1);
  return ORDER.filter((s) => by.has(s)).map((s) => `${by.get(s)} ${NODE_STATUS[s]}`).join(" · ");
}

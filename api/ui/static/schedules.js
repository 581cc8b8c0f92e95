// The schedules page: one user's schedules in one app (the key decides which it may see), made, paused,
// resumed, triggered and deleted here, with each schedule's newest runs linking to their invocation pages.
// A page of its own (schedules.html) beside the inbox app; the key is the one the inbox page keeps in this tab.

import { auth, call, describe } from "./api.js";
import { dateTime, h, notice, pill } from "./dom.js";

const view = document.getElementById("view");
const params = new URLSearchParams(location.search);
const where = { app: params.get("app") || "", user: params.get("user") || "" };
const problem = h("div", {});
const outcome = h("div", { class: "outcome" }); // what the last button did (the cards are redrawn after it)
const list = h("div", { class: "inbox-list" });

const base = () => `/apps/${encodeURIComponent(where.app)}/users/${encodeURIComponent(where.user)}/schedules`;

function field(label, input) {
  return h("label", { class: "field" }, label, input);
}

function whereForm() {
  const app = h("input", { name: "app", value: where.app, required: true });
  const user = h("input", { name: "user", value: where.user, required: true });
  return h("form", {
    class: "filters",
    onsubmit: (event) => {
      event.preventDefault();
      location.search = new URLSearchParams({ app: app.value.trim(), user: user.value.trim() }).toString();
    },
  }, field("App", app), field("User", user), h("button", { type: "submit" }, "Show schedules"));
}

function createForm() {
  const inputs = {
    id: h("input", { name: "id", placeholder: "(generated)" }),
    when: h("input", { name: "when", placeholder: "*/5 * * * *  or  60", required: true }),
    timezone: h("input", { name: "timezone", value: "UTC" }),
    message: h("input", { name: "message", required: true }),
    sessionId: h("input", { name: "sessionId", placeholder: "(a new session per run)" }),
    jitterS: h("input", { name: "jitterS", type: "number", min: "0", value: "0" }),
    missed: h("select", { name: "missed" }, ...["latest", "all", "skip"].map((m) => h("option", { value: m }, m))),
  };
  const result = h("div", {});
  return h("details", { class: "item" }, h("summary", {}, "New schedule"), h("form", {
    onsubmit: async (event) => {
      event.preventDefault();
      const when = inputs.when.value.trim();
      const spec = /^\d+(\.\d+)?$/.test(when) ? { intervalS: Number(when) } : { cron: when };
      Object.assign(spec, { timezone: inputs.timezone.value.trim() || "UTC", newMessage: inputs.message.value,
        jitterS: Number(inputs.jitterS.value || 0), missed: inputs.missed.value });
      if (inputs.id.value.trim()) spec.id = inputs.id.value.trim();
      if (inputs.sessionId.value.trim()) spec.sessionId = inputs.sessionId.value.trim();
      try {
        const made = await call("POST", base(), spec);
        result.replaceChildren(notice("success", `Schedule ${made.id} made.`));
        load();
      } catch (error) {
        result.replaceChildren(notice("error", describe(error)));
      }
    },
  }, field("Id", inputs.id), field("Cron (5 fields, or 6 with seconds first) or seconds between runs", inputs.when),
  field("Timezone", inputs.timezone), field("Message", inputs.message), field("Session", inputs.sessionId),
  field("Jitter (s)", inputs.jitterS), field("Overdue ticks", inputs.missed),
  h("button", { type: "submit" }, "Make schedule"), result));
}

function card(schedule) {
  const spec = schedule.spec;
  const result = h("div", {});
  const runs = h("ol", { class: "answered-list" });
  const act = (label, method, path, then) => h("button", {
    type: "button",
    onclick: async () => {
      try {
        const answer = await call(method, `${base()}/${encodeURIComponent(schedule.id)}${path}`);
        outcome.replaceChildren(notice("success", `${schedule.id}: ${then(answer)}`));
        load();
      } catch (error) {
        result.replaceChildren(notice("error", describe(error)));
      }
    },
  }, label);
  const showRuns = h("button", {
    type: "button",
    onclick: async () => {
      try {
        const answer = await call("GET", `${base()}/${encodeURIComponent(schedule.id)}/runs`);
        runs.replaceChildren(...answer.runs.map((run) => h("li", {},
          h("a", { href: `/ui#/invocations/${encodeURIComponent(run.invocationId)}` }, run.invocationId), " ",
          pill(run.status), ` ${dateTime(run.createdAt * 1000)}`)));
        if (!answer.runs.length) runs.replaceChildren(h("li", { class: "muted" }, "no runs yet"));
      } catch (error) {
        result.replaceChildren(notice("error", describe(error)));
      }
    },
  }, "Runs");
  const when = spec.cron ? `cron ${spec.cron} (${spec.timezone})` : `every ${spec.intervalS} s`;
  const next = schedule.paused ? "paused" : schedule.ended ? "ended"
    : schedule.nextRunAt ? `next ${dateTime(schedule.nextRunAt * 1000)}` : "";
  return h("article", { class: "item", dataset: { schedule: schedule.id } },
    h("header", {}, h("span", { class: "agent" }, schedule.id), h("span", {}, when), h("span", {}, next),
      h("span", {}, `${schedule.runs} runs, ${schedule.missed} missed`),
      schedule.lastError ? h("span", { class: "bad" }, schedule.lastError) : null),
    h("p", {}, typeof spec.newMessage === "string" ? spec.newMessage : JSON.stringify(spec.newMessage)),
    h("div", { class: "buttons" },
      schedule.paused ? act("Resume", "POST", "/resume", () => "Resumed.") : act("Pause", "POST", "/pause", () => "Paused."),
      act("Run now", "POST", "/trigger", (answer) => `Enqueued ${answer.invocationId}.`),
      act("Delete", "DELETE", "", () => "Deleted."), showRuns),
    result, runs);
}

async function load() {
  if (!where.app || !where.user) return;
  try {
    const page = await call("GET", `${base()}?pageSize=200`);
    problem.replaceChildren();
    list.replaceChildren(...page.schedules.map(card));
    if (!page.schedules.length) list.replaceChildren(h("p", { class: "empty" }, "No schedules yet."));
  } catch (error) {
    problem.replaceChildren(notice("error", describe(error)));
  }
}

auth.onUnauthorized = () => problem.replaceChildren(notice("error",
  "This API needs a key: sign in on the inbox page first (the key is kept in this tab)."));
view.replaceChildren(h("div", { class: "title" }, h("h1", {}, "Schedules")), whereForm(),
  ...(where.app && where.user ? [createForm()] : [h("p", { class: "muted" }, "Name an app and a user.")]),
  problem, outcome, list);
load();

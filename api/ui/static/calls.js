// One pending call: what it asks, and the controls that answer it (approve / reject, or a form).

import { ApiError, call, describe } from "./api.js";
import { deadline, h, json, notice } from "./dom.js";
import { rawJson, schemaForm } from "./form.js";

const KIND_LABEL = { confirmation: "Confirmation", input: "Question", long_running: "Waiting for a result" };

/** The card of ``pending`` (a pendingCalls item of ``invocation``); onAnswered(label) after a 202. */
export function pendingCall(invocation, pending, { onAnswered = () => {} } = {}) {
  const result = h("div", { class: "result" });
  const send = async (response, label, buttons) => {
    buttons.forEach((b) => { b.disabled = true; });
    result.replaceChildren(notice("info", "Sending…"));
    try {
      await call("POST", `/invocations/${encodeURIComponent(invocation.invocationId)}/function-responses`, {
        functionResponses: [{ id: pending.id, name: pending.name, response }],
      });
      result.replaceChildren(notice("success", `${label}: sent. The invocation is queued to continue.`));
      onAnswered(label);
    } catch (error) {
      const conflict = error instanceof ApiError && error.status === 409;
      result.replaceChildren(notice(conflict ? "conflict" : "error", describe(error)));
      if (!conflict) buttons.forEach((b) => { b.disabled = false; });
    }
  };
  const body = pending.kind === "confirmation" ? confirmation(pending, send)
    : pending.kind === "input" ? input(pending, send) : longRunning(pending, send);
  // The API says when the approval rules keep this principal from answering: no controls, and why.
  const locked = pending.answerable === false;
  if (locked) body.querySelectorAll(".buttons, form, .raw").forEach((element) => element.remove());
  return h("section", { class: `call kind-${pending.kind}`, dataset: { callId: pending.id } },
    h("header", {}, h("span", { class: "kind" }, KIND_LABEL[pending.kind] || pending.kind), " ",
      h("code", {}, pending.name), " · ", deadline(pending.deadline ? pending.deadline * 1000 : null)),
    body,
    (pending.approvals || []).length ? h("p", { class: "approvals" }, `Approved so far by ${pending.approvals.join(", ")}`)
      : null,
    locked ? h("p", { class: "muted not-yours" }, "Not yours to answer: the approval rules keep you from answering "
      + "this call (you asked for it, or it needs another role or approver).") : null,
    result);
}

/** A table of a call's arguments. */
export function argsTable(args) {
  const entries = Object.entries(args || {});
  if (!entries.length) return h("p", { class: "muted" }, "no arguments");
  return h("table", { class: "args" }, entries.map(([name, value]) => h("tr", {},
    h("th", {}, name),
    h("td", {}, typeof value === "string" ? value : h("code", {}, JSON.stringify(value))))));
}

function confirmation(pending, send) {
  const original = pending.originalCall || {};
  const approve = h("button", { class: "approve", type: "button" }, "Approve");
  const reject = h("button", { class: "reject", type: "button" }, "Reject");
  const buttons = [approve, reject];
  // A tool that declares its approval payload (confirmation_payload_schema) gets a form: Approve sends it.
  const form = pending.payloadSchema?.type === "object" ? schemaForm(pending.payloadSchema) : null;
  const problem = h("div", {});
  approve.addEventListener("click", () => {
    problem.replaceChildren();
    let payload;
    try { payload = form ? form.read() : undefined; } catch (error) {
      problem.replaceChildren(notice("error", error.message));
      return;
    }
    send(payload === undefined ? { confirmed: true } : { confirmed: true, payload }, "Approved", buttons);
  });
  reject.addEventListener("click", () => send({ confirmed: false }, "Rejected", buttons));
  return h("div", { class: "ask" },
    h("p", {}, "The agent wants to run ", h("code", { class: "tool" }, original.name || "a tool"), " with:"),
    argsTable(original.args),
    pending.hint ? h("p", { class: "hint" }, pending.hint) : null,
    pending.payload != null ? h("div", {}, h("small", {}, "payload"), h("pre", {}, json(pending.payload))) : null,
    form ? h("div", { class: "payload-form" }, h("small", {}, "approve with"), form.element, problem) : null,
    h("div", { class: "buttons" }, approve, reject));
}

function input(pending, send) {
  const form = schemaForm(pending.responseSchema);
  return h("div", { class: "ask" },
    h("p", { class: "question" }, pending.question || "The agent asks for input."),
    pending.payload != null ? h("div", { class: "payload" }, h("small", {}, "about"), h("pre", {}, json(pending.payload))) : null,
    pending.responseSchema ? h("details", { class: "schema" }, h("summary", {}, "answer schema"),
      h("pre", {}, json(pending.responseSchema))) : null,
    form ? answerForm(form, "Send answer", send) : null,
    rawFallback(send, !form));
}

function longRunning(pending, send) {
  // The tool may declare its answer (answer_schema, quick_answers): then one click, or a form, never JSON.
  const quick = quickAnswers(pending.quickAnswers || [], send);
  const form = schemaForm(pending.answerSchema);
  const declared = Boolean(quick || form);
  return h("div", { class: "ask" },
    h("p", {}, h("code", { class: "tool" }, pending.name), " is waiting for its result. Arguments:"),
    argsTable(pending.args),
    quick,
    form ? answerForm(form, quick ? "Send this answer" : "Send answer", send) : null,
    declared ? null : rawFallback(send, true));
}

/** One button per declared quick answer; a click sends its response as it is. */
function quickAnswers(answers, send) {
  if (!answers.length) return null;
  const buttons = answers.map(({ label }) => h("button", { class: "quick", type: "button" }, label));
  answers.forEach(({ label, response }, i) => {
    buttons[i].addEventListener("click", () => send(response, label, buttons));
  });
  return h("div", { class: "buttons quick-answers" }, buttons);
}

function answerForm(form, label, send) {
  const button = h("button", { type: "submit" }, label);
  const problem = h("div", {});
  return h("form", {
    class: "answer",
    novalidate: true, // our own checks say what to fix, in the card, in words
    onsubmit: (event) => {
      event.preventDefault();
      problem.replaceChildren();
      let response;
      try { response = form.read(); } catch (error) { problem.replaceChildren(notice("error", error.message)); return; }
      send(response, "Answer", [button]);
    },
  }, form.element, problem, h("div", { class: "buttons" }, button));
}

function rawFallback(send, open) {
  const form = answerForm(rawJson(), "Send JSON answer", send);
  return open ? h("div", { class: "raw" }, h("small", {}, "Answer (a JSON object):"), form)
    : h("details", { class: "raw" }, h("summary", {}, "Answer with raw JSON instead"), form);
}

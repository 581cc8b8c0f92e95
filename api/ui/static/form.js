// A form generated from a JSON Schema (the response schema of an input request), with a raw-JSON fallback.

import { h } from "./dom.js";

const SCALARS = new Set(["string", "number", "integer", "boolean"]);

/**
 * Fields for ``schema``, or null when it is not one a simple form can express (then use rawJson()).
 * Returns {element, read}; read() gives the response object or throws an Error that says what to fix.
 * An object schema answers with its fields; a single value answers as {"result": value}.
 */
export function schemaForm(schema) {
  if (!schema || typeof schema !== "object") return null;
  if (schema.type === "object" && schema.properties && Object.keys(schema.properties).length) {
    const required = new Set(schema.required || []);
    const fields = Object.entries(schema.properties).map(([name, prop]) => field(name, prop || {}, required.has(name)));
    return {
      element: h("div", { class: "schema-form" }, fields.map((f) => f.element)),
      read: () => Object.fromEntries(fields.map((f) => [f.name, f.read()]).filter(([, v]) => v !== undefined)),
    };
  }
  if (SCALARS.has(schema.type) || Array.isArray(schema.enum)) {
    const single = field("answer", schema, true);
    return { element: h("div", { class: "schema-form" }, single.element), read: () => ({ result: single.read() }) };
  }
  return null;
}

function field(name, prop, required) {
  const label = prop.title || name;
  const help = prop.description ? h("small", {}, prop.description) : null;
  let input;
  let read;
  if (Array.isArray(prop.enum)) {
    // No choice is made for the person: a required one starts empty too, and sending it empty says so.
    input = h("select", { name }, h("option", { value: "" }, required ? "— choose —" : "—"),
      prop.enum.map((option, i) => h("option", { value: String(i) }, String(option))));
    read = () => (input.value === "" ? missing(label, required) : prop.enum[Number(input.value)]);
  } else if (prop.type === "boolean") {
    input = h("input", { type: "checkbox", name });
    read = () => input.checked;
    return { name, read, element: h("label", { class: "field check" }, input, ` ${label}`, help) };
  } else if (prop.type === "number" || prop.type === "integer") {
    input = h("input", { type: "number", name, step: prop.type === "integer" ? "1" : "any", required });
    read = () => {
      if (input.value.trim() === "") return missing(label, required);
      const value = Number(input.value);
      if (!Number.isFinite(value) || (prop.type === "integer" && !Number.isInteger(value))) {
        throw new Error(`“${label}” must be ${prop.type === "integer" ? "a whole number" : "a number"}.`);
      }
      return value;
    };
  } else if (prop.type === "string" || (prop.type === undefined && !prop.properties)) {
    input = h("input", { type: "text", name, required });
    read = () => (input.value === "" ? missing(label, required) : input.value);
  } else {
    input = h("textarea", { name, rows: "3", placeholder: "JSON" });
    read = () => (input.value.trim() === "" ? missing(label, required) : parseJson(input.value, `“${label}”`));
  }
  return { name, read, element: h("label", { class: "field" }, h("span", {}, label, required ? " *" : ""), input, help) };
}

function missing(label, required) {
  if (required) throw new Error(`“${label}” is required.`);
  return undefined;
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not valid JSON: ${error.message}`);
  }
}

/** A textarea for a JSON object answer; read() gives the object or throws saying what is wrong. */
export function rawJson(initial = "") {
  const input = h("textarea", { class: "raw-json", rows: "4", spellcheck: "false",
    placeholder: '{"status": "approved"}' }, initial);
  return {
    element: input,
    read: () => {
      if (!input.value.trim()) throw new Error('Enter the answer as a JSON object, like {"status": "approved"}.');
      const value = parseJson(input.value, "The answer");
      if (!value || typeof value !== "object" || Array.isArray(value)) {
        throw new Error('The answer must be a JSON object, like {"status": "approved"}.');
      }
      return value;
    },
  };
}

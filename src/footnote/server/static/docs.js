/* A small, offline rendering of /openapi.json: operations, parameters, bodies, responses. */
"use strict";
(function () {
  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function schemaText(schema, spec, depth) {
    if (!schema) return "";
    if (schema.$ref) {
      const name = schema.$ref.split("/").pop();
      const target = ((spec.components || {}).schemas || {})[name];
      return depth > 2 || !target ? name : schemaText(target, spec, depth + 1);
    }
    if (schema.anyOf) return schema.anyOf.map((s) => schemaText(s, spec, depth + 1)).join(" | ");
    if (schema.type === "object" && schema.properties) {
      const req = new Set(schema.required || []);
      return "{ " + Object.entries(schema.properties).map(([k, v]) =>
        k + (req.has(k) ? "" : "?") + ": " + schemaText(v, spec, depth + 1)).join(", ") + " }";
    }
    if (schema.type === "array") return schemaText(schema.items, spec, depth + 1) + "[]";
    return schema.type || "any";
  }

  async function main() {
    const root = document.getElementById("api");
    const key = sessionStorage.getItem("footnote-key");
    const resp = await fetch("/openapi.json", { headers: key ? { "X-API-Key": key } : {} });
    if (!resp.ok) {
      root.append(el("p", "turn", "Could not load /openapi.json (HTTP " + resp.status + "): open the chat and enter the API key first."));
      return;
    }
    const spec = await resp.json();
    for (const [path, ops] of Object.entries(spec.paths || {})) {
      for (const [method, op] of Object.entries(ops)) {
        const card = el("article", "turn");
        card.append(el("p", "turn__question", method.toUpperCase() + " " + path));
        if (op.summary) card.append(el("p", "turn__state", op.summary));
        if (op.description) card.append(el("p", "turn__answer", op.description));
        for (const p of op.parameters || []) {
          card.append(el("p", "source__label", p.in + " " + p.name + (p.required ? "" : "?") + ": " +
            schemaText(p.schema, spec, 0) + (p.description ? " — " + p.description : "")));
        }
        const body = op.requestBody && op.requestBody.content && op.requestBody.content["application/json"];
        if (body) card.append(el("p", "source__label", "body: " + schemaText(body.schema, spec, 0)));
        for (const [code, r] of Object.entries(op.responses || {})) {
          card.append(el("p", "source__label", code + " " + (r.description || "")));
        }
        root.append(card);
      }
    }
  }

  document.addEventListener("DOMContentLoaded", main);
})();

/* A small, offline rendering of /openapi.json: operations, parameters, bodies, responses; descriptions
   are Markdown (markdown.js: safe, text nodes only). */
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

  const MD = window.FootnoteMarkdown;

  /* The body's fields, each with its description (Markdown), one line each. */
  function fieldLines(schema, spec) {
    let s = schema;
    if (s && s.$ref) s = ((spec.components || {}).schemas || {})[s.$ref.split("/").pop()];
    if (!s || !s.properties) return [];
    return Object.entries(s.properties).filter(([, v]) => v.description).map(([k, v]) => {
      const line = el("p", "source__label docs__field");
      line.append(el("code", "", k), " — ", ...MD.inline(v.description));
      return line;
    });
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
        if (op.description) {
          const d = el("div", "turn__answer docs__description");
          d.append(MD.blocks(op.description, null, 2));
          card.append(d);
        }
        for (const p of op.parameters || []) {
          const line = el("p", "source__label", p.in + " " + p.name + (p.required ? "" : "?") + ": " + schemaText(p.schema, spec, 0));
          if (p.description) line.append(" — ", ...MD.inline(p.description));
          card.append(line);
        }
        const body = op.requestBody && op.requestBody.content && op.requestBody.content["application/json"];
        if (body) {
          card.append(el("p", "source__label", "body: " + schemaText(body.schema, spec, 0)));
          card.append(...fieldLines(body.schema, spec));
        }
        for (const [code, r] of Object.entries(op.responses || {})) {
          const line = el("p", "source__label", code + " ");
          line.append(...MD.inline(r.description || ""));
          card.append(line);
        }
        root.append(card);
      }
    }
  }

  document.addEventListener("DOMContentLoaded", main);
})();

/* Footnote web chat: the curator's view of curated memory (GET/POST/PUT/DELETE /api/memory) — list the
   notes, add one, edit one, remove one. Text goes into the page with textContent, never innerHTML. */
"use strict";
(function () {
  const I = window.FootnoteI18n;
  const $ = (sel) => document.querySelector(sel);
  const lang = () => (document.documentElement.lang === "ru" ? "ru" : "en");
  const m = { notes: [], writable: false, editing: null, lastFocus: null };

  const el = window.FootnoteDom.el;

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    const key = sessionStorage.getItem("footnote-key");
    if (key) h["X-API-Key"] = key;
    return h;
  }

  const noteUrl = (id) => "/api/memory/" + encodeURIComponent(id);
  const day = (ts) => (ts ? new Date(ts * 1000).toISOString().slice(0, 10) : "");
  const lines = (text) => text.split("\n").map((x) => x.trim()).filter(Boolean);

  function say(which, text) {
    const err = $("#memory-error"), ok = $("#memory-ok");
    err.hidden = which !== "error"; ok.hidden = which !== "ok";
    (which === "error" ? err : ok).textContent = text || "";
  }

  async function load() {
    const resp = await fetch("/api/memory", { headers: headers() });
    if (!resp.ok) { $("#memory-count").textContent = I.t(lang(), "error_prefix") + " " + resp.status; return; }
    const got = await resp.json();
    m.notes = got.notes || [];
    m.writable = !!got.writable;
    paint();
  }

  function paint() {
    const lg = lang();
    $("#memory-count").textContent = I.t(lg, "memory_count", { n: m.notes.length });
    /* a server without an API key takes no writes: say so instead of offering buttons that fail */
    $("#memory-new").hidden = !m.writable;
    $("#memory-readonly").hidden = m.writable;
    if (!m.writable) $("#memory-form").hidden = true;
    $("#memory-list").replaceChildren(...m.notes.map((n) => {
      const row = el("li", { class: "memory-row", "data-note": n.id, "data-kind": n.kind },
        el("span", { class: "memory-row__id", dir: "auto", text: n.title || n.id }),
        el("span", { class: "memory-row__meta", text: I.t(lg, "kind_" + n.kind, {}, n.kind) + " · " +
          [n.author, day(n.updated)].filter(Boolean).join(", ") }),
        m.writable ? el("button", { type: "button", class: "tool memory-row__edit", text: I.t(lg, "memory_edit"), on: { click: () => edit(n.id) } }) : null,
        m.writable ? el("button", { type: "button", class: "tool tool--remove", text: I.t(lg, "remove"), on: { click: () => remove(n, row) } }) : null,
        el("span", { class: "memory-row__triggers", dir: "auto", text: (n.triggers || []).join(" · ") }));
      if ((n.missing_sources || []).length) {
        row.append(el("span", { class: "memory-row__missing", text: I.t(lg, "memory_missing", { sources: n.missing_sources.join(", ") }) }));
      }
      return row;
    }));
  }

  function fill(note) {
    m.editing = note ? note.id : null;
    $("#memory-form").hidden = false;
    $("#memory-id").value = note ? note.id : "";
    $("#memory-id").readOnly = !!note;
    $("#memory-kind").value = note ? note.kind : "pinned";
    $("#memory-title-input").value = note ? (note.title === note.id ? "" : note.title) : "";
    $("#memory-triggers").value = note ? (note.triggers || []).join("\n") : "";
    $("#memory-sources").value = note ? (note.sources || []).join("\n") : "";
    $("#memory-author").value = note ? note.author || "" : "";
    $("#memory-body").value = note ? note.body || "" : "";
    say(null);
    (note ? $("#memory-body") : $("#memory-id")).focus();
  }

  async function edit(id) {
    const resp = await fetch(noteUrl(id), { headers: headers() });
    if (!resp.ok) { say("error", I.t(lang(), "error_prefix") + " " + resp.status); return; }
    fill(await resp.json());
  }

  async function save(ev) {
    ev.preventDefault();
    const body = {
      id: $("#memory-id").value.trim(), kind: $("#memory-kind").value, title: $("#memory-title-input").value.trim(),
      triggers: lines($("#memory-triggers").value), sources: lines($("#memory-sources").value),
      author: $("#memory-author").value.trim(), body: $("#memory-body").value,
    };
    const editing = m.editing;
    const resp = await fetch(editing ? noteUrl(editing) : "/api/memory", {
      method: editing ? "PUT" : "POST", headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify(body),
    });
    const got = await resp.json().catch(() => ({}));
    if (!resp.ok) { say("error", String(got.error || resp.statusText || resp.status)); return; }
    say("ok", I.t(lang(), "memory_saved") + ": " + body.id);
    m.editing = null;
    $("#memory-form").hidden = true;
    await load();
  }

  async function remove(note, row) {
    if (!window.confirm(I.t(lang(), "memory_remove_confirm", { id: note.id }))) return;
    const resp = await fetch(noteUrl(note.id), { method: "DELETE", headers: headers() });
    if (resp.ok) { await load(); return; }
    const got = await resp.json().catch(() => ({}));
    row.append(el("span", { class: "sources-row__error", role: "alert", text: String(got.error || resp.status) }));
  }

  function open() {
    m.lastFocus = document.activeElement;
    $("#memory-panel").hidden = false;
    $("#memory-close").focus();
    load();
  }

  function close() {
    if ($("#memory-panel").hidden) return;
    $("#memory-panel").hidden = true;
    $("#memory-form").hidden = true;
    const back = m.lastFocus;
    m.lastFocus = null;
    if (back && document.contains(back)) back.focus(); else $("#question").focus();
  }

  /* Tab stays inside the open panel; Escape closes it. */
  function keys(ev) {
    const panel = $("#memory-panel");
    if (panel.hidden) return;
    if (ev.key === "Escape") { close(); return; }
    if (ev.key !== "Tab") return;
    const items = [...panel.querySelectorAll("button, input, select, textarea")].filter((n) => !n.closest("[hidden]"));
    if (!items.length) return;
    const first = items[0], last = items[items.length - 1];
    if (ev.shiftKey && document.activeElement === first) { ev.preventDefault(); last.focus(); }
    else if (!ev.shiftKey && document.activeElement === last) { ev.preventDefault(); first.focus(); }
    else if (!panel.contains(document.activeElement)) { ev.preventDefault(); first.focus(); }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("#open-memory").addEventListener("click", open);
    $("#memory-close").addEventListener("click", close);
    $("#memory-panel").addEventListener("click", (ev) => { if (ev.target === $("#memory-panel")) close(); });
    $("#memory-new").addEventListener("click", () => fill(null));
    $("#memory-cancel").addEventListener("click", () => { m.editing = null; $("#memory-form").hidden = true; say(null); });
    $("#memory-form").addEventListener("submit", save);
    document.addEventListener("keydown", keys);
  });
})();

/* Footnote web chat: streams POST /api/ask (Server-Sent Events over fetch), paints citation chips,
   opens originals (audio span, PDF page with the passage highlighted, verse by address).
   Every piece of answer or source text goes into the page with textContent — never innerHTML. */
"use strict";
(function () {
  const I = window.FootnoteI18n;
  const $ = (sel) => document.querySelector(sel);
  const state = {
    lang: "en", key: sessionStorage.getItem("footnote-key") || "", status: null, busy: false,
    conversationId: null, follow: true, lastFocus: null, notice: null,
  };
  const CONV_RE = /^[0-9a-f]{32}$/;

  const el = window.FootnoteDom.el;

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (state.key) h["X-API-Key"] = state.key;
    return h;
  }

  const sourceUrl = (id) => "/api/sources/" + id.split("/").map(encodeURIComponent).join("/");

  function fmtTime(ms) {
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const mm = h ? String(m).padStart(2, "0") : String(m);
    return (h ? h + ":" : "") + mm + ":" + String(sec).padStart(2, "0");
  }

  /* What a citation opens: transcript (audio span), verse (address), pdf (page), passage (text). */
  function citationType(c) {
    const loc = c.locator || {};
    if (loc.note !== undefined) return "pinned";  // the editors' pinned answer (curated memory)
    if (loc.track_id !== undefined) return "transcript";
    if (loc.book !== undefined) return "verse";
    if (loc.page !== undefined && loc.page !== null) return "pdf";
    return "passage";
  }

  /* ``span``: the [start_ms, end_ms] a transcript chip will play (the quoted cues), when known. */
  function citationLabel(c, lang, span) {
    const loc = c.locator || {};
    const title = c.title || c.source_id;
    switch (citationType(c)) {
      case "pinned": return I.t(lang, "editors_answer") + ": " + (loc.title || loc.note) + " — " + editorsLine(loc, lang);
      case "transcript": {
        const [a, b] = span || [loc.start_ms, loc.end_ms];
        // a speech recognition says so: the recording it replays is the ground truth
        const machine = c.transcript === "machine" ? " (" + I.t(lang, "machine_transcript") + ")" : "";
        return title + ", " + fmtTime(a) + "–" + fmtTime(b) + machine;
      }
      case "verse": {
        const addr = loc.label || (loc.book + " " + loc.loc);
        // a commentary on a verse says so (and names its commentator when the source does)
        if (c.kind === "commentary") {
          const meta = c.source_meta || {};
          const who = meta.commentator || meta.author || "";
          return addr + " — " + I.t(lang, "commentary") + (who ? ", " + who : "");
        }
        return addr;
      }
      case "pdf": {
        // a page read by OCR says so, with how sure the recognition was: the page image is the ground truth
        const ocr = c.ocr ? " (" + I.t(lang, "ocr_read") + (c.ocr_confidence != null ? ", " + Math.round(c.ocr_confidence) + " %" : "") + ")" : "";
        return title + " " + I.t(lang, "page") + " " + loc.page + ocr;
      }
      default: return title + (loc.section ? " — " + loc.section : "") +
        (loc.para !== undefined && loc.para !== null ? ", ¶ " + loc.para : "");
    }
  }

  /* Who blessed a pinned answer and when ("Editorial board, 2026-12-01"). */
  function editorsLine(loc, lang) {
    const when = loc.updated ? new Date(loc.updated * 1000).toISOString().slice(0, 10) : "";
    return [loc.author || I.t(lang, "editors"), when].filter(Boolean).join(", ");
  }

  // ---- status, key ----------------------------------------------------------------------------
  async function loadStatus() {
    const resp = await fetch("/api/status", { headers: headers() });
    if (resp.status === 401) { showKeyForm(); return; }
    if (!resp.ok) return;
    state.status = await resp.json();
    $("#key-form").hidden = true;
    paintStatus();
  }

  function paintStatus() {
    const s = state.status;
    if (!s) return;
    const lexical = Boolean(s.lexical_only);
    document.body.classList.toggle("lexical-only", lexical);
    const banner = $("#lexical-banner");
    banner.hidden = !lexical;
    banner.setAttribute("data-lexical-only", String(lexical));
    const e = s.embedding || {};
    const backlog = e.state === "embedding" || e.state === "paused";
    banner.textContent = I.t(state.lang, backlog ? "lexical_while_embedding" : "lexical_only", { percent: Math.floor(e.percent || 0) });
    // in words a reader understands: what the store holds, and how it can be searched right now
    let line = I.t(state.lang, "status", { sources: s.sources, fragments: s.fragments });
    if (!s.fragments) {
      line = I.t(state.lang, "status_empty");
    } else if (e.state === "embedding") {
      if (e.eta_s == null) {  // no rate measured yet: say so rather than "about ? left"
        line += ", " + I.t(state.lang, "embedding_started", { percent: Math.floor(e.percent) });
      } else {
        const eta = e.eta_s < 90 ? Math.max(1, Math.round(e.eta_s)) + " s" : Math.round(e.eta_s / 60) + " min";
        line += ", " + I.t(state.lang, "embedding_progress", { percent: Math.floor(e.percent), eta: eta });
      }
    } else if (e.state === "paused") {
      line += ", " + I.t(state.lang, "embedding_paused", { percent: Math.floor(e.percent) });
    } else if (lexical) {
      line += " — " + I.t(state.lang, "status_lexical");
    } else {
      line += ", " + I.t(state.lang, "status_embedded");
    }
    const el = $("#status-line");
    el.textContent = line.endsWith(".") ? line : line + ".";
    el.title = s.embedder ? I.t(state.lang, "status_title", { embedder: s.embedder }) : "";
    el.setAttribute("data-embedding", e.state || "");
    paintAccess(s.access);
    clearTimeout(state.statusTimer);
    if (backlog) state.statusTimer = setTimeout(loadStatus, 10000);  // follow the progress
  }

  /* What this reader reads: the public collections (with a way to sign in for more), or a named key's. */
  function paintAccess(access) {
    const line = $("#access-line");
    const named = access && access.collections && access.key !== "public";
    line.hidden = !(access && access.collections);
    if (line.hidden) return;
    const names = access.collections.join(", ");
    $("#access-text").textContent = named ? I.t(state.lang, "access_key", { key: access.key, collections: names })
      : I.t(state.lang, "access_public", { collections: names });
    $("#sign-in").hidden = Boolean(named);
  }

  function showKeyForm() {
    $("#key-form").hidden = false;
    $("#key-input").focus();
  }

  async function submitKey(ev) {
    ev.preventDefault();
    const key = $("#key-input").value.trim();
    const resp = await fetch("/api/session", { method: "POST", headers: { "X-API-Key": key } });
    const err = $("#key-error");
    if (!resp.ok) {
      err.hidden = false;
      err.textContent = I.t(state.lang, "key_wrong");
      return;
    }
    err.hidden = true;
    state.key = key;
    sessionStorage.setItem("footnote-key", key);
    const was = state.status && state.status.access;
    if (was && was.key === "public") { location.reload(); return; }  // another key: other collections, other conversations
    await loadStatus();
  }

  // ---- safe Markdown (markdown.js: no HTML, every piece of text is a text node) ---------------------
  const mdBlocks = (text, marker) => window.FootnoteMarkdown.blocks(text, marker, 2);

  // ---- one turn -------------------------------------------------------------------------------
  class Turn {
    constructor(question, lang) {
      this.lang = lang;
      this.text = "";
      this.citations = new Map();
      this.spans = new Map();  // "n|claim" → the [start_ms, end_ms] a transcript chip plays
      this.claims = [];
      this.pending = false;
      this.stateLabel = el("p", { class: "turn__state", hidden: "" });
      this.disclaimer = el("p", { class: "turn__disclaimer", role: "note", hidden: "" });
      this.reason = el("p", { class: "turn__reason", role: "note", hidden: "" });
      this.progress = el("p", { class: "turn__progress", role: "status", text: I.t(lang, "searching") });
      this.understood = el("p", { class: "turn__understood", dir: "auto", hidden: "" });
      this.failure = el("p", { class: "turn__failure", role: "alert", hidden: "" });
      this.tools = el("div", { class: "turn__tools", hidden: "" });
      this.answer = el("div", { class: "turn__answer", dir: "auto" });
      this.sources = el("ol", { class: "turn__sources", hidden: "" });
      this.sourcesHead = el("h3", { class: "turn__sources-head", text: I.t(lang, "sources"), hidden: "" });
      this.node = el("article", { class: "turn", "data-state": "pending", lang },
        el("p", { class: "turn__question", dir: "auto", text: question }), this.understood,
        this.progress, this.stateLabel, this.disclaimer, this.reason, this.answer, this.failure, this.sourcesHead, this.sources,
        this.tools);
      this.question = question;
      hideWelcome();
      $("#log").append(this.node);
      state.follow = true;
      follow(this.node);
    }

    onUnderstood(data) {
      this.understood.hidden = false;
      this.understood.textContent = I.t(this.lang, "searching_for") + " " + (data.question || "");
      this.node.setAttribute("data-understood", data.question || "");
      follow(this.node);
    }

    onStage(data) {
      const name = data.name || "";
      if (!this.text && this.writer === undefined) {
        const planning = /outline|compact|plan/i.test(name);
        this.progress.textContent = I.t(this.lang, planning ? "reading" : "searching");
      }
      this.node.setAttribute("data-stage", name);
    }

    onWriting(data) {
      // a model writes: nothing is shown until a sentence has passed the server's checks (a minute or more locally)
      this.writer = data.model || "";
      if (!this.text) {
        this.progress.textContent = this.writer ? I.t(this.lang, "writing_with", { model: this.writer })
          : I.t(this.lang, "writing");
      }
      this.node.setAttribute("data-writer", this.writer);
    }

    onToken(data) {
      if (!this.text) this.progress.textContent = I.t(this.lang, "writing");
      this.text += data.text || "";
      this.node.setAttribute("data-tokens", String(Number(this.node.getAttribute("data-tokens") || 0) + 1));
      this.schedule();
    }

    onCitation(c) {
      this.citations.set(Number(c.n), c);
      this.schedule();
    }

    onVerdict(v) {
      this.setMode(v.mode, v.disclaimer, v.verdict);
      this.setAbstention(v.abstention);
    }

    onDone(a) {
      this.lang = I.answerLang(a.lang, this.lang);
      this.text = a.answer || "";
      this.citations = new Map((a.citations || []).map((c) => [Number(c.n), c]));
      this.setMode(a.mode, a.disclaimer, a.verdict);
      this.setAbstention(a.abstention);
      this.progress.hidden = true;
      this.node.setAttribute("data-done", "true");
      if (a.conversation_id) setConversation(a.conversation_id);
      this.conversationId = a.conversation_id || null;
      this.turnNo = a.turn || null;
      this.render();
      this.addTools();
      this.addSupport(a.trace && a.trace.support);
      this.addRemoved(a);
      if (state.follow) follow(this.node);
      this.resolveSpans();
    }

    /* A question the server would not ask (empty, too long, no words): the reader's to mend, not a failure. */
    onInvalid(message) {
      this.progress.hidden = true;
      this.node.setAttribute("data-state", "invalid");
      this.node.setAttribute("data-done", "true");
      this.stateLabel.hidden = false;
      this.stateLabel.textContent = I.t(this.lang, "state_invalid");
      this.failure.hidden = false;
      this.failure.textContent = I.t(this.lang, "invalid_prefix") + " " + message;
      this.render();
    }

    /* A failure keeps what was already shown and says why under it. */
    onError(message) {
      this.progress.hidden = true;
      this.node.setAttribute("data-state", "error");
      this.node.setAttribute("data-done", "true");
      if (this.text) this.node.setAttribute("data-partial", "true");
      this.stateLabel.hidden = false;
      this.stateLabel.textContent = I.t(this.lang, "state_error");
      this.failure.hidden = false;
      this.failure.textContent = I.t(this.lang, this.text ? "error_partial" : "error_prefix") + " " + message;
      this.render();
    }

    /* The answer with its citations as Markdown (what "Copy" puts on the clipboard). */
    markdown() {
      const cites = [...this.citations.values()].sort((a, b) => a.n - b.n);
      const lines = ["**" + this.question + "**", "", this.text.trim()];
      if (cites.length) {
        lines.push("", I.t(this.lang, "sources") + ":");
        for (const c of cites) lines.push("[" + c.n + "]: " + originalUrl(c, true) + " — " + citationLabel(c, this.lang));
      }
      return lines.join("\n") + "\n";
    }

    addTools() {
      const btn = el("button", { type: "button", class: "tool tool--copy", text: I.t(this.lang, "copy") });
      btn.addEventListener("click", async () => {
        const md = this.markdown();
        this.node.dataset.copied = md;
        try { await navigator.clipboard.writeText(md); btn.textContent = I.t(this.lang, "copied"); }
        catch (e) { btn.textContent = I.t(this.lang, "copy_failed"); }
      });
      this.tools.replaceChildren(btn);
      if (this.conversationId && this.turnNo) {  // this answer alone, as a page to keep (the server writes it)
        const save = el("button", { type: "button", class: "tool tool--save", text: I.t(this.lang, "save_answer") });
        save.addEventListener("click", () => downloadExport(this.conversationId, "html", this.turnNo, save, this.lang));
        this.tools.append(save);
      }
      this.tools.hidden = false;
    }

    /* Citation support from the trace: how many sentences their cited passage supports, and which not. */
    addSupport(sup) {
      if (!sup || !sup.n_sentences) return;
      const bad = sup.unsupported || [];
      const ok = sup.n_sentences - bad.length;
      this.node.setAttribute("data-supported", ok + "/" + sup.n_sentences);
      const box = el("details", { class: "turn__support" },
        el("summary", { text: I.t(this.lang, "support_line", { ok, n: sup.n_sentences }) }));
      if (bad.length) {
        box.append(el("p", { text: I.t(this.lang, "support_unsupported") }));
        box.append(el("ul", {}, ...bad.map((x) => el("li", { dir: "auto", text: x }))));
      } else {
        box.append(el("p", { text: I.t(this.lang, "support_all") }));
      }
      this.tools.append(box);
    }

    /* What the server took out of a model's answer before the reader saw it (the CLI prints the same). */
    addRemoved(a) {
      const parts = [];
      // a sentence the passages it cites do not support is named apart from one without a valid citation
      const why = (a.trace && a.trace.removed_by_reason) || {};
      const unsupported = Number(why.unsupported) || 0;
      const counts = [["removed_sentences", (Number(a.removed_sentences) || 0) - unsupported],
                      ["removed_unsupported", unsupported], ["dropped_citations", a.dropped_citations],
                      ["removed_mentions", a.removed_mentions]];
      for (const [key, n] of counts) if (Number(n) > 0) parts.push(I.t(this.lang, "removed_" + key, { n: Number(n) }));
      if (!parts.length) return;
      this.node.setAttribute("data-removed", String(Number(a.removed_sentences) || 0));
      this.node.setAttribute("data-removed-unsupported", String(unsupported));
      this.tools.append(el("p", { class: "turn__removed", text: I.t(this.lang, "removed_line", { what: parts.join("; ") }) }));
    }

    setMode(mode, disclaimer, verdict) {
      const st = { corpus: "answered", not_found: "not-found", fallback: "fallback", declined: "declined" }[mode] || "answered";
      this.node.setAttribute("data-state", st);
      this.node.setAttribute("data-mode", mode || "");
      if (verdict) this.node.setAttribute("data-verdict", verdict);
      this.stateLabel.hidden = false;
      this.stateLabel.textContent = I.t(this.lang, "state_" + st.replace("-", "_"));
      if (disclaimer) {
        this.disclaimer.hidden = false;
        this.disclaimer.textContent = disclaimer;  // the server's disclaimer, painted as given
      }
    }

    /* Why the corpus gave no answer (the server's typed reason), said in the reader's language. */
    setAbstention(ab) {
      if (!ab || !ab.reason) {
        this.node.removeAttribute("data-abstention");
        this.reason.hidden = true;
        return;
      }
      this.node.setAttribute("data-abstention", ab.reason);
      this.node.setAttribute("data-abstention-stage", ab.stage || "");
      this.reason.hidden = false;
      this.reason.textContent = I.t(this.lang, "reason_" + ab.reason, {}, "");
      if (!this.reason.textContent) this.reason.hidden = true;  // a reason this page does not know: the state says enough
    }

    schedule() {
      if (this.pending) return;
      this.pending = true;
      requestAnimationFrame(() => { this.pending = false; this.render(); });
    }

    chip(c, claim) {
      const type = citationType(c);
      const loc = c.locator || {};
      const span = claim !== undefined ? this.spans.get(c.n + "|" + claim) : undefined;
      if (claim && type === "transcript") this.claims.push([c, claim]);
      const label = citationLabel(c, this.lang, span);
      return el("button", {
        type: "button", class: "chip chip--" + type, "data-n": c.n, "data-type": type, "data-kind": c.kind,
        "data-source": c.source_id, "data-fragment": c.fragment_id,
        "data-start-ms": loc.start_ms, "data-end-ms": loc.end_ms, "data-page": loc.page, "data-address": loc.label,
        "data-note": loc.note, "data-author": loc.author, "data-updated": loc.updated,
        "data-transcript": c.transcript || null,
        "data-play-start-ms": span ? span[0] : null, "data-play-end-ms": span ? span[1] : null,
        title: label, "aria-label": "[" + c.n + "] " + label,
        on: { click: () => openCitation(c, this.lang, claim, span) },
      }, String(c.n));
    }

    /* Once the answer is whole: the cues each transcript chip will play, so its label shows that span. */
    async resolveSpans() {
      const todo = this.claims.filter(([c, claim]) => !this.spans.has(c.n + "|" + claim));
      let changed = false;
      for (const [c, claim] of todo) {
        const span = await quotedSpan(sourceUrl(c.source_id), c.locator || {}, claim);
        if (span) { this.spans.set(c.n + "|" + claim, span); changed = true; }
      }
      if (changed) this.render();
      this.node.setAttribute("data-spans", "true");
    }

    render() {
      const marker = (n, before) => {
        const c = this.citations.get(n);
        // the claim a chip stands for: the sentence just before it (a PDF page highlights it when it is quoted)
        const claim = before.replace(/\[\d+\]/g, "").split(/(?<=[.!?…])\s+/).filter((x) => x.trim()).pop() || "";
        return c ? this.chip(c, claim.trim()) : document.createTextNode("[" + n + "]");
      };
      // a re-render keeps the keyboard where it was (the same chip by position)
      const active = document.activeElement;
      const chipsBefore = [...this.node.querySelectorAll(".chip")];
      const at = active && active.classList && active.classList.contains("chip") ? chipsBefore.indexOf(active) : -1;
      const viewerFrom = state.lastFocus ? chipsBefore.indexOf(state.lastFocus) : -1;
      this.claims = [];
      this.answer.replaceChildren(mdBlocks(this.text, marker));
      const items = [...this.citations.values()].sort((a, b) => a.n - b.n).map((c) =>
        el("li", { class: "source", "data-n": c.n }, this.chip(c), el("span", { class: "source__label", text: citationLabel(c, this.lang) })));
      this.sources.replaceChildren(...items);
      this.sources.hidden = items.length === 0;
      this.sourcesHead.hidden = items.length === 0;
      const chipsAfter = this.node.querySelectorAll(".chip");
      if (at >= 0 && chipsAfter[at]) chipsAfter[at].focus();
      if (viewerFrom >= 0 && chipsAfter[viewerFrom]) state.lastFocus = chipsAfter[viewerFrom];
      if (state.follow && this.node === $("#log").lastElementChild) follow(this.node);
    }
  }

  /* Keep the newest turn in view above the fixed question box (scroll-margin-bottom is the box's
     height), following the streaming answer while the reader has not scrolled away. */
  function follow(node) {
    syncFormHeight();
    const box = $("#ask-form").getBoundingClientRect();
    const r = node.getBoundingClientRect();
    if (r.bottom > box.top - 4 || r.top < 0) node.scrollIntoView({ block: "end" });
  }

  function syncFormHeight() {
    const h = Math.ceil($("#ask-form").getBoundingClientRect().height);
    document.documentElement.style.setProperty("--form-h", h + "px");
  }

  // ---- SSE over fetch -------------------------------------------------------------------------
  async function* sseEvents(resp) {
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let event = "message";
        const data = [];
        for (const line of frame.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
      }
    }
  }

  async function ask(question) {
    const lang = I.detectLang(question) || state.lang;
    state.lang = lang;
    I.apply(lang);
    paintStatus();
    const turn = new Turn(question, lang);
    let resp;
    try {
      resp = await fetch("/api/ask", {
        method: "POST",
        headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
        body: JSON.stringify(Object.assign({ question, stream: true },
          state.conversationId ? { conversation_id: state.conversationId } : {})),
      });
    } catch (e) {
      turn.onError(String(e));
      return;
    }
    if (!resp.ok) {
      const body = await resp.json().catch(() => ({ error: resp.statusText }));
      if (body.type === "InvalidQuestion") turn.onInvalid(body.error || resp.statusText);  // the reader's to mend
      else turn.onError(body.error || resp.statusText);
      if (resp.status === 401) showKeyForm();
      if (resp.status === 404 && state.conversationId) setConversation(null);  // deleted meanwhile: start anew
      return;
    }
    let finished = false;
    try {
      for await (const { event, data } of sseEvents(resp)) {
        if (event === "understood") turn.onUnderstood(data);
        else if (event === "stage") turn.onStage(data);
        else if (event === "writing") turn.onWriting(data);
        else if (event === "token") turn.onToken(data);
        else if (event === "citation") turn.onCitation(data);
        else if (event === "verdict") turn.onVerdict(data);
        else if (event === "done") { turn.onDone(data); finished = true; }
        else if (event === "error") { turn.onError(data.error || "error"); finished = true; }
      }
    } catch (e) {
      turn.onError(I.t(turn.lang, "stream_broken"));
      return;
    }
    if (!finished) turn.onError(I.t(turn.lang, "stream_ended"));
  }

  // ---- conversations: the id in the URL is the permalink; a reload repaints the turns ------------
  function setConversation(id) {
    state.conversationId = id;
    const url = new URL(location.href);
    if (id) url.searchParams.set("c", id); else url.searchParams.delete("c");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
    $("#new-chat").hidden = !id;
    $("#export-chat").hidden = !id;
    if (!id) $("#export-menu").hidden = true;
  }

  /* Export: the server writes the file (GET /api/conversations/{id}/export, the reader's own), fetched with
     the same headers as every call (an API key) and handed to the browser as a download. */
  async function downloadExport(id, format, turn, button, lang) {
    const url = "/api/conversations/" + id + "/export?format=" + format + (turn ? "&turn=" + turn : "");
    const label = button.textContent;
    let resp = null;
    try { resp = await fetch(url, { headers: headers() }); } catch (e) { resp = null; }
    if (!resp || !resp.ok) {
      button.textContent = I.t(lang || state.lang, "export_failed");
      setTimeout(() => { button.textContent = label; }, 4000);
      return;
    }
    const blob = await resp.blob();
    const m = /filename="([^"]+)"/.exec(resp.headers.get("Content-Disposition") || "");
    const a = el("a", { href: URL.createObjectURL(blob), download: m ? m[1] : "footnote." + format, hidden: true });
    document.body.append(a);
    a.click();
    document.body.dataset.exported = a.getAttribute("download");
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  /* A permalink that does not open (another reader's, deleted, mistyped) is said on the welcome screen,
     never a silent fresh chat: the server answers 404 alike for "not yours" and "gone" (it does not say
     which conversations exist); anything else is a failure to load. */
  async function restoreConversation() {
    const id = new URL(location.href).searchParams.get("c");
    if (!id) return false;
    if (!CONV_RE.test(id)) { setConversation(null); state.notice = { key: "conversation_gone" }; return false; }
    let resp = null;
    try { resp = await fetch("/api/conversations/" + id, { headers: headers() }); } catch (e) { resp = null; }
    if (!resp || !resp.ok) {
      setConversation(null);
      state.notice = resp && resp.status === 404 ? { key: "conversation_gone" }
        : { key: "conversation_unreadable", why: resp ? "HTTP " + resp.status : I.t(state.lang, "stream_broken") };
      return false;
    }
    const conv = await resp.json();
    for (const t of conv.turns || []) {
      const lang = (t.answer && t.answer.lang === "ru") ? "ru" : (I.detectLang(t.question) || state.lang);
      const turn = new Turn(t.question, lang);
      if (t.rewritten_question) turn.onUnderstood({ question: t.rewritten_question });
      turn.onDone(Object.assign({}, t.answer, { conversation_id: conv.id, turn: t.n }));
      turn.node.setAttribute("data-restored", "true");
    }
    setConversation(conv.id);
    const last = $("#log").lastElementChild;
    if (last) follow(last);
    return true;
  }

  function newConversation() {
    setConversation(null);
    $("#log").replaceChildren();
    showWelcome();
    $("#question").focus();
  }

  // ---- the sources panel: browse, filter, open, remove (with the API key) --------------------------
  /* /api/sources pages (``limit``, ``offset``; ``total`` counts every match) and filters (``kind``,
     ``lang``, ``collection``) on the server; the same filters also apply here, so a server that returns
     everything at once works too. */
  const panel = { items: [], next: null };
  const PAGE = 100;

  function sourcesQuery(next) {
    const p = new URLSearchParams({ limit: String(PAGE) });
    const kind = $("#filter-kind").value, lang = $("#filter-lang").value, coll = $("#filter-collection").value;
    if (kind) p.set("kind", kind);
    if (lang) p.set("lang", lang);
    if (coll) p.set("collection", coll);
    if (next && next.cursor !== undefined) p.set("cursor", next.cursor);
    if (next && next.offset !== undefined) p.set("offset", next.offset);
    return "/api/sources?" + p.toString();
  }

  async function loadSources(more) {
    const resp = await fetch(sourcesQuery(more ? panel.next : null), { headers: headers() });
    if (!resp.ok) { $("#sources-count").textContent = I.t(state.lang, "error_prefix") + " " + resp.status; return; }
    const body = await resp.json();
    const rows = Array.isArray(body) ? body : (body.sources || body.items || []);
    panel.items = more ? panel.items.concat(rows) : rows;
    const seen = (more && panel.next && panel.next.offset) ? panel.next.offset + rows.length : rows.length;
    panel.next = body.next_cursor ? { cursor: body.next_cursor }
      : body.next_offset ? { offset: body.next_offset }
      : (typeof body.total === "number" && body.total > seen) ? { offset: seen } : null;
    panel.total = typeof body.total === "number" ? body.total : null;
    paintSources();
  }

  function fillSelect(sel, values) {
    const keep = sel.value;
    const have = new Set([...sel.options].map((o) => o.value));
    for (const v of values) if (!have.has(v)) sel.append(el("option", { value: v, text: v }));
    sel.value = keep;
  }

  function paintSources() {
    const kind = $("#filter-kind").value, lang = $("#filter-lang").value, coll = $("#filter-collection").value;
    const text = $("#filter-text").value.trim().toLowerCase();
    fillSelect($("#filter-kind"), [...new Set(panel.items.map((x) => x.kind))].sort());
    fillSelect($("#filter-lang"), [...new Set(panel.items.map((x) => x.lang))].sort());
    fillSelect($("#filter-collection"), [...new Set(panel.items.map((x) => x.collection).filter(Boolean))].sort());
    const shown = panel.items.filter((x) => (!kind || x.kind === kind) && (!lang || x.lang === lang) &&
      (!coll || x.collection === coll) && (!text || (x.title || x.id).toLowerCase().includes(text)));
    $("#sources-count").textContent = I.t(state.lang, "sources_shown", { n: shown.length }) +
      (panel.total !== null && panel.total > panel.items.length ? " " + I.t(state.lang, "of_total", { total: panel.total }) : "");
    $("#sources-list").replaceChildren(...shown.map((x) => {
      const row = el("li", { class: "sources-row", "data-source": x.id },
        el("span", { class: "sources-row__title", dir: "auto", text: x.title || x.id }),
        el("span", { class: "sources-row__meta", text: I.t(state.lang, "kind_" + x.kind, {}, x.kind) + " · " + x.lang +
          (x.collection ? " · " + x.collection : "") }),
        // text, Word, EPUB and web pages open as a page to read (escaped, anchored, no script of theirs);
        // audio, video, PDF and scans as uploaded
        el("a", { class: "tool", href: sourceUrl(x.id) + (/^text\/|wordprocessingml|epub/.test(x.media_type || "") ? "/view" : ""),
          target: "_blank", rel: "noopener", text: I.t(state.lang, "open") }));
      if (state.key) {
        row.append(el("button", { type: "button", class: "tool tool--remove", text: I.t(state.lang, "remove"),
          on: { click: () => removeSource(x, row) } }));
      }
      return row;
    }));
    $("#sources-more").hidden = !panel.next;
  }

  async function removeSource(x, row) {
    if (!window.confirm(I.t(state.lang, "remove_confirm", { title: x.title || x.id }))) return;
    const resp = await fetch(sourceUrl(x.id), { method: "DELETE", headers: headers() });
    if (resp.ok) {
      panel.items = panel.items.filter((y) => y.id !== x.id);
      paintSources();
      loadStatus();
    } else {
      const body = await resp.json().catch(() => ({}));
      row.append(el("span", { class: "sources-row__error", role: "alert", text: String(body.error || resp.statusText || resp.status) }));
    }
  }

  function openSources() {
    state.lastFocus = document.activeElement;
    $("#sources-panel").hidden = false;
    $("#sources-close").focus();
    loadSources(false);
  }

  function closeSources() {
    if ($("#sources-panel").hidden) return;
    $("#sources-panel").hidden = true;
    const back = state.lastFocus;
    state.lastFocus = null;
    if (back && document.contains(back)) back.focus(); else $("#question").focus();
  }

  // ---- the empty chat: what the collection holds, questions drawn from it ------------------------
  /* "English" for "en" (in the interface's language), the code itself where the browser cannot say. */
  function langName(code, lang) {
    try { return new Intl.DisplayNames([lang], { type: "language" }).of(code) || code; } catch (e) { return code; }
  }

  function hideWelcome() {
    const w = $("#welcome");
    if (w) w.hidden = true;
    state.notice = null;  // said once: a new conversation's welcome is a plain one
  }

  async function showWelcome() {
    const w = $("#welcome");
    if (!w || $("#log").children.length) return;
    w.hidden = false;
    const s = state.status;
    const lang = state.lang;
    const notice = $("#welcome-notice");
    if (notice) {
      notice.hidden = !state.notice;
      notice.textContent = state.notice ? I.t(lang, state.notice.key, { why: state.notice.why || "" }) : "";
    }
    const facts = $("#welcome-facts");
    facts.replaceChildren();
    if (s) {
      const kinds = Object.entries(s.by_kind || {}).sort((a, b) => b[1] - a[1])
        .map(([k, n]) => I.t(lang, "kind_" + k, {}, k.replace(/_/g, " ")) + ": " + n);
      const langs = Object.entries(s.by_lang || {}).sort((a, b) => b[1] - a[1]).map(([k, n]) => langName(k, lang) + ": " + n);
      facts.append(el("li", { text: I.t(lang, "holds", { sources: s.sources, fragments: s.fragments }) }));
      if (kinds.length) facts.append(el("li", { text: I.t(lang, "by_kind") + " " + kinds.join(" · ") }));
      if (langs.length) facts.append(el("li", { text: I.t(lang, "languages") + " " + langs.join(" · ") }));
    }
    let sources = [];
    try {
      const r = await fetch("/api/sources?limit=50", { headers: headers() });
      if (r.ok) { const body = await r.json(); sources = Array.isArray(body) ? body : (body.sources || body.items || []); }
    } catch (e) { sources = []; }
    const titled = sources.filter((x) => x && x.title);
    const titles = $("#welcome-titles");
    titles.replaceChildren(...titled.slice(0, 5).map((x) => el("li", { text: x.title, dir: "auto" })));
    // example questions made by the server from the collection's passages, each checked to get an
    // answer from the corpus (GET /api/examples; the first call may take a moment: searched once, cached)
    const box = $("#welcome-examples");
    box.setAttribute("aria-busy", "true");
    let examples = [];
    try {
      const r = await fetch("/api/examples", { headers: headers() });
      if (r.ok) examples = (await r.json()).examples || [];
    } catch (e) { examples = []; }
    box.removeAttribute("aria-busy");
    box.setAttribute("data-loaded", "true");
    $("#welcome-examples-label").hidden = examples.length === 0;
    box.replaceChildren(...examples.map((x) => el("button", {
      type: "button", class: "example", dir: "auto", lang: x.lang, text: x.question,
      "data-source": x.source_id, "data-how": x.how,
      on: { click: () => { $("#question").value = x.question; $("#ask-form").requestSubmit(); } },
    })));
  }

  /* "Open the original" at the cited place: a PDF at its page, a recording at the cited time
     (media fragment), a verse at its address and any other text at its passage on the source's
     rendered page (/view: an anchor per place, the cited one lit). ``absolute``: a full URL (for
     copied Markdown). */
  function originalUrl(c, absolute) {
    const loc = c.locator || {};
    let url = sourceUrl(c.source_id);
    const view = () => sourceUrl(c.source_id) + "/view?f=" + encodeURIComponent(c.fragment_id || "");
    switch (citationType(c)) {
      case "pdf": url += "#page=" + encodeURIComponent(loc.page); break;
      case "transcript": url += "#t=" + (loc.start_ms / 1000) + "," + (loc.end_ms / 1000); break;
      case "verse": url = view() + "#" + encodeURIComponent((loc.label || (loc.book + " " + loc.loc)).trim().split(/\s+/).join("-")); break;
      case "pinned": url = "/#memory=" + encodeURIComponent(loc.note); break;  // a note has no original file
      default: url = view() + "#p-" + encodeURIComponent(String(c.fragment_id || "").split("#").pop()); break;
    }
    return absolute ? new URL(url, location.href).href : url;
  }

  // ---- the viewer: audio span, PDF page, verse, passage ----------------------------------------
  // a recording plays in the audio element, a video lecture in the video one (the same span logic)
  let playingVideo = false;
  const player = () => $(playingVideo ? "#video-player" : "#player");

  function playSpan(src, startMs, endMs) {
    const a = player();
    const start = startMs / 1000, end = endMs / 1000;
    a.dataset.start = String(start);
    a.dataset.end = String(end);
    const go = () => {
      a.currentTime = start;
      const p = a.play();
      if (p && p.catch) p.catch(() => {});  // autoplay refused: the position is still set
    };
    if (a.getAttribute("src") !== src) {
      a.addEventListener("loadedmetadata", go, { once: true });
      a.setAttribute("src", src);
      a.load();
    } else if (a.readyState >= 1) go();
    else a.addEventListener("loadedmetadata", go, { once: true });
  }

  function onTimeUpdate() {
    const a = player();
    const end = parseFloat(a.dataset.end || "");
    if (!Number.isNaN(end) && a.currentTime >= end) {
      a.pause();
      a.dataset.end = "";  // pressing play again continues past the span
    }
  }

  function resetViewer() {
    $("#viewer-audio").hidden = true;
    $("#viewer-page").hidden = true;
    $("#viewer-text").hidden = true;
    for (const a of [$("#player"), $("#video-player")]) {
      a.pause();
      a.dataset.end = "";
    }
  }

  /* The cues of the cited window that hold the sentence a chip stands for (extractive answers quote
     the transcript verbatim): [start_ms, end_ms] of those cues, or null to play the whole window. */
  const norm = (t) => (t || "").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  async function quotedSpan(url, loc, claim) {
    const want = norm(claim);
    if (want.split(" ").length < 3) return null;
    let cues;
    try {
      const r = await fetch(url + "/cues?start_ms=" + loc.start_ms + "&end_ms=" + loc.end_ms, { headers: headers() });
      if (!r.ok) return null;
      cues = (await r.json()).cues || [];
    } catch (e) {
      return null;
    }
    let text = "";
    const at = [];  // [char offset where the cue starts, cue]
    for (const c of cues) {
      const t = norm(c.text);
      if (!t) continue;
      if (text) text += " ";
      at.push([text.length, c]);
      text += t;
    }
    const i = text.indexOf(want);
    if (i < 0) return null;
    const j = i + want.length;
    const hit = at.filter(([o, c], k) => o < j && (k + 1 < at.length ? at[k + 1][0] : text.length + 1) > i).map(([, c]) => c);
    if (!hit.length) return null;
    const span = [Math.max(loc.start_ms, hit[0].start_ms), Math.min(loc.end_ms, hit[hit.length - 1].end_ms)];
    return span[1] > span[0] ? span : null;
  }

  /* "audio" or "video" when the source's original is a recording of that kind, else "". */
  async function mediaKind(url) {
    try {
      const r = await fetch(url, { method: "HEAD", headers: headers() });
      const m = r.ok ? /^(audio|video)\//.exec(r.headers.get("content-type") || "") : null;
      return m ? m[1] : "";
    } catch (e) {
      return "";
    }
  }

  /* A PDF page on a phone: drawn to the width of the screen, a page's text is ~6 px high. The viewer shows it
     at 1 image pixel per CSS pixel instead (the server renders 1.5 px per point: 11 pt text ≈ 16 px),
     scrolled to the lit passage (X-Footnote-Highlight-Box), pinch-zoomable, with a button for the whole page. */
  const narrowViewer = () => window.innerWidth < 700;

  async function pageBox(pageUrl) {
    try {
      const r = await fetch(pageUrl, { headers: headers() });  // the browser's cache answers: the image just loaded
      return (r.ok && r.headers.get("X-Footnote-Highlight-Box")) || "";
    } catch (e) { return ""; }
  }

  function applyZoom() {
    const fig = $("#viewer-page");
    const img = $("#page-image");
    const box = $("#page-box");
    const zoomed = fig.dataset.zoom === "passage";
    const lang = fig.dataset.lang || state.lang;
    $("#page-zoom").textContent = I.t(lang, zoomed ? "zoom_page" : "zoom_passage");
    $("#page-zoom").setAttribute("aria-pressed", String(zoomed));
    if (!img.naturalWidth) return;
    img.style.width = zoomed ? img.naturalWidth + "px" : "";
    const lit = (fig.dataset.box || "").split(",").map(Number);
    if (lit.length !== 4 || lit.some(Number.isNaN)) return;
    const k = img.getBoundingClientRect().width / img.naturalWidth;  // CSS px per image px
    if (zoomed) {
      box.scrollLeft = Math.max(0, lit[0] * k - 12);
      box.scrollTop = Math.max(0, lit[1] * k - 24);
    } else {
      const outer = $("#viewer .viewer__box");
      const top = img.getBoundingClientRect().top - outer.getBoundingClientRect().top + outer.scrollTop;
      outer.scrollTop = Math.max(0, top + lit[1] * k - 48);
    }
  }

  /* The quoted sentence marked inside a passage's text (text nodes and a <mark>; never HTML). */
  function markQuote(node, text, claim) {
    const q = (claim || "").replace(/\s+/g, " ").trim();
    const flat = text.replace(/\s+/g, " ");
    const i = q.length >= 12 ? flat.indexOf(q) : -1;
    if (i < 0) { node.textContent = text; return false; }
    node.replaceChildren(document.createTextNode(flat.slice(0, i)), el("mark", { class: "quote", text: q }),
      document.createTextNode(flat.slice(i + q.length)));
    return true;
  }

  async function openCitation(c, lang, claim, knownSpan) {
    const type = citationType(c);
    const loc = c.locator || {};
    const url = sourceUrl(c.source_id);
    resetViewer();
    const viewer = $("#viewer");
    viewer.setAttribute("data-type", type);
    viewer.setAttribute("data-n", String(c.n));
    $("#viewer-title").textContent = "[" + c.n + "] " + citationLabel(c, lang);
    $("#viewer-meta").textContent = "";
    $("#viewer-open").setAttribute("href", originalUrl(c, false));
    $("#viewer-open").textContent = I.t(lang, "open_original");
    $("#viewer-open").hidden = type === "pinned";
    const text = $("#viewer-text");
    markQuote(text, c.text || "", claim);
    state.lastFocus = document.activeElement;
    viewer.hidden = false;
    $("#viewer-close").focus();
    if (type === "transcript") {
      $("#viewer-meta").textContent = I.t(lang, "recording") + " " + fmtTime(loc.start_ms) + "–" + fmtTime(loc.end_ms);
      text.hidden = false;
      const media = await mediaKind(url);
      if (media) {
        playingVideo = media === "video";
        $("#player").hidden = playingVideo;
        $("#video-player").hidden = !playingVideo;
        $("#viewer-audio").hidden = false;
        const span = knownSpan || (await quotedSpan(url, loc, claim)) || [loc.start_ms, loc.end_ms];
        $("#viewer-meta").textContent = I.t(lang, "recording") + " " + fmtTime(span[0]) + "–" + fmtTime(span[1]);
        $("#viewer").dataset.playStartMs = String(span[0]);
        $("#viewer").dataset.playEndMs = String(span[1]);
        playSpan(url, span[0], span[1]);
      } else {
        $("#viewer-meta").textContent = I.t(lang, "no_audio");
      }
    } else if (type === "pdf") {
      const img = $("#page-image");
      const fig = $("#viewer-page");
      img.alt = citationLabel(c, lang);
      img.setAttribute("data-page", String(loc.page));
      const pageUrl = url + "/pages/" + encodeURIComponent(loc.page) + "?fragment=" + encodeURIComponent(c.fragment_id || "") +
        (claim ? "&q=" + encodeURIComponent(claim.slice(0, 400)) : "");
      // a phone shows the page zoomed to a readable size, scrolled to the lit passage; a wide screen the whole page
      fig.dataset.zoom = narrowViewer() ? "passage" : "page";
      fig.dataset.box = "";
      fig.dataset.lang = lang;
      img.style.width = "";
      img.onload = () => { pageBox(pageUrl).then((box) => { fig.dataset.box = box; applyZoom(); }); applyZoom(); };
      img.src = pageUrl;
      $("#page-caption").textContent = I.t(lang, "page_long") + " " + loc.page + (loc.section ? " — " + loc.section : "");
      fig.hidden = false;
      applyZoom();
    } else if (type === "pinned") {
      $("#viewer-meta").textContent = I.t(lang, "editors_answer_long") + " — " + editorsLine(loc, lang);
      text.hidden = false;
    } else if (type === "verse") {
      // the title names the address already: say what it is and where it comes from
      $("#viewer-meta").textContent = I.t(lang, c.kind === "commentary" ? "commentary_long" : "verse") + (c.title ? " · " + c.title : "");
      text.hidden = false;
    } else {
      $("#viewer-meta").textContent = I.t(lang, "passage") + (loc.section ? " — " + loc.section : "");
      text.hidden = false;
    }
  }

  function closeViewer() {
    if ($("#viewer").hidden) return;
    resetViewer();
    $("#viewer").hidden = true;
    const back = state.lastFocus;
    state.lastFocus = null;
    if (back && document.contains(back)) back.focus(); else $("#question").focus();
  }

  /* Tab and Shift+Tab stay inside the open dialog (the viewer or the sources panel). */
  function trapFocus(ev) {
    const dialog = [$("#viewer"), $("#sources-panel")].find((d) => !d.hidden);
    if (ev.key !== "Tab" || !dialog) return;
    const items = [...dialog.querySelectorAll("button, [href], audio, input, select, [tabindex]:not([tabindex='-1'])")]
      .filter((n) => !n.closest("[hidden]"));
    if (!items.length) return;
    const first = items[0], last = items[items.length - 1];
    if (ev.shiftKey && document.activeElement === first) { ev.preventDefault(); last.focus(); }
    else if (!ev.shiftKey && document.activeElement === last) { ev.preventDefault(); first.focus(); }
    else if (!dialog.contains(document.activeElement)) { ev.preventDefault(); first.focus(); }
  }

  // ---- wiring ---------------------------------------------------------------------------------
  document.addEventListener("DOMContentLoaded", () => {
    I.apply(state.lang);
    $("#ask-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const q = $("#question").value.trim();
      if (!q || state.busy) return;
      state.busy = true;
      $("#ask-button").disabled = true;
      $("#question").value = "";
      try { await ask(q); } finally { state.busy = false; $("#ask-button").disabled = false; }
    });
    $("#question").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("#ask-form").requestSubmit(); }
    });
    $("#key-form").addEventListener("submit", submitKey);
    $("#sign-in").addEventListener("click", showKeyForm);
    $("#viewer-close").addEventListener("click", closeViewer);
    $("#page-zoom").addEventListener("click", () => {
      const fig = $("#viewer-page");
      fig.dataset.zoom = fig.dataset.zoom === "passage" ? "page" : "passage";
      applyZoom();
    });
    $("#viewer").addEventListener("click", (ev) => { if (ev.target === $("#viewer")) closeViewer(); });
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") { if (!$("#viewer").hidden) closeViewer(); else closeSources(); } else trapFocus(ev);
    });
    $("#open-sources").addEventListener("click", openSources);
    $("#sources-close").addEventListener("click", closeSources);
    $("#sources-panel").addEventListener("click", (ev) => { if (ev.target === $("#sources-panel")) closeSources(); });
    $("#filter-kind").addEventListener("change", () => loadSources(false));
    $("#filter-lang").addEventListener("change", () => loadSources(false));
    $("#filter-collection").addEventListener("change", () => loadSources(false));
    $("#filter-text").addEventListener("input", paintSources);
    $("#sources-more").addEventListener("click", () => loadSources(true));
    $("#player").addEventListener("timeupdate", onTimeUpdate);
    $("#video-player").addEventListener("timeupdate", onTimeUpdate);
    $("#new-chat").addEventListener("click", newConversation);
    $("#export-chat").addEventListener("click", () => {
      const menu = $("#export-menu");
      menu.hidden = !menu.hidden;
      $("#export-chat").setAttribute("aria-expanded", String(!menu.hidden));
    });
    for (const b of document.querySelectorAll("#export-menu [data-format]")) {
      b.addEventListener("click", async () => {
        if (state.conversationId) await downloadExport(state.conversationId, b.dataset.format, null, b);
        $("#export-menu").hidden = true;
        $("#export-chat").setAttribute("aria-expanded", "false");
      });
    }
    let lastY = window.scrollY;
    window.addEventListener("scroll", () => {
      // follow the stream until the reader scrolls up away from it, again once they are back at its end;
      // a turn growing under a scroll (a stream, the sources, the support line) is not the reader leaving
      const y = window.scrollY;
      const up = y < lastY - 1;
      lastY = y;
      const box = $("#ask-form").getBoundingClientRect();
      const last = $("#log").lastElementChild;
      if (!last || last.getBoundingClientRect().bottom <= box.top + 40) state.follow = true;
      else if (up) state.follow = false;
    }, { passive: true });
    window.addEventListener("resize", syncFormHeight);
    syncFormHeight();
    $("#question").focus();
    loadStatus().then(restoreConversation).then((restored) => { if (!restored) showWelcome(); });
  });
})();

/* Safe Markdown for the chat's answers and the API docs: no HTML ever — every piece of text becomes a
   text node. Blocks: "#"…"###" headings, "-"/"*"/"1." lists, paragraphs. Inline: **bold**, *em*,
   `code` (and ``code``), [text](/path or https://…) links, and [n] markers handed to ``marker(n, before)``
   (the chat's citation chips; without a marker they stay the text "[n]"). */
"use strict";
(function () {
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, String(v));
    }
    for (const c of children) node.append(c);
    return node;
  }

  const plain = (n) => document.createTextNode("[" + n + "]");
  const SAFE_HREF = /^(\/(?!\/)|https?:\/\/)/i;

  function inline(text, marker) {
    const mark = marker || plain;
    const out = [];
    const re = /(\*\*[^*]+\*\*|__[^_]+__|``[^`]+``|`[^`]+`|\*[^*\s][^*]*\*|\[([^\]\n]+)\]\(([^)\s]+)\)|\[(\d+)\])/g;
    let last = 0, m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
      const tok = m[0];
      if (m[4] !== undefined) {
        // a chip and the punctuation right after it stay on one line (no "." alone at a line's start)
        const node = mark(Number(m[4]), text.slice(0, m.index));
        const punct = /^[.,;:!?…)»”]+/.exec(text.slice(m.index + tok.length));
        if (punct) {
          out.push(el("span", { class: "nobr" }, node, document.createTextNode(punct[0])));
          last = re.lastIndex = m.index + tok.length + punct[0].length;
          continue;
        }
        out.push(node);
      }
      else if (m[2] !== undefined) {
        out.push(SAFE_HREF.test(m[3]) ? el("a", { href: m[3] }, ...inline(m[2], marker)) : document.createTextNode(m[2]));
      } else if (tok.startsWith("**") || tok.startsWith("__")) out.push(el("strong", {}, ...inline(tok.slice(2, -2), marker)));
      else if (tok.startsWith("``")) out.push(el("code", { text: tok.slice(2, -2) }));
      else if (tok.startsWith("`")) out.push(el("code", { text: tok.slice(1, -1) }));
      else out.push(el("em", {}, ...inline(tok.slice(1, -1), marker)));
      last = m.index + tok.length;
    }
    if (last < text.length) out.push(document.createTextNode(text.slice(last)));
    return out;
  }

  /* ``headingBase``: added to the number of "#" (2, the default: "##" → h4, under the page's h2/h3). */
  function blocks(text, marker, headingBase) {
    const base = headingBase || 2;
    const frag = document.createDocumentFragment();
    const lines = String(text || "").replace(/\r\n/g, "\n").split("\n");
    let para = [], list = null;
    const flushPara = () => { if (para.length) { frag.append(el("p", {}, ...inline(para.join(" "), marker))); para = []; } };
    const flushList = () => { if (list) { frag.append(list); list = null; } };
    for (const raw of lines) {
      const line = raw.trimEnd();
      let m;
      if (!line.trim()) { flushPara(); flushList(); continue; }
      if ((m = /^(#{1,3})\s+(.*)$/.exec(line))) {
        flushPara(); flushList();
        frag.append(el("h" + Math.min(6, m[1].length + base), { class: "md-h" }, ...inline(m[2], marker)));
      } else if ((m = /^\s*([-*•]|\d+[.)])\s+(.*)$/.exec(line))) {
        flushPara();
        const ordered = /\d/.test(m[1]);
        if (!list || (list.tagName === "OL") !== ordered) { flushList(); list = el(ordered ? "ol" : "ul", { class: "md-list" }); }
        list.append(el("li", {}, ...inline(m[2], marker)));
      } else {
        flushList();
        para.push(line.trim());
      }
    }
    flushPara(); flushList();
    return frag;
  }

  window.FootnoteMarkdown = { inline, blocks };
})();

/* Footnote web chat: the one element builder the chat and the curator view share. Text goes in with
   textContent, attributes with setAttribute — never innerHTML. */
"use strict";
(function () {
  /* el("li", {class, text, on: {click: fn}, "data-x": v, …}, ...children): null/undefined/false
     attributes and children are left out. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
      else node.setAttribute(k, String(v));
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  window.FootnoteDom = { el };
})();

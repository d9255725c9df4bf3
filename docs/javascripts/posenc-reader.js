// Reader affordances that Material does not give out of the box:
// 1. Copy buttons on `pycon` blocks copy only the code: the `>>> ` and `... ` prompts are removed
//    and printed output lines are left out, so what is pasted runs in Python. Material copies the
//    `data-copy` attribute of the code element when there is one (its own documented hook).
// 2. Tap (or Enter) on a figure to see it at its natural width in a dialog that scrolls sideways:
//    on a phone the text of a figure then reads at its designed size instead of about half.
(function () {
  "use strict";

  // The code of a doctest block: lines after ">>> " or "... ", without the prompts, no output.
  function pyconCode(text) {
    const lines = [];
    for (const line of text.replace(/\n$/, "").split("\n")) {
      if (line.startsWith(">>> ") || line.startsWith("... ")) lines.push(line.slice(4));
      else if (line === ">>>" || line === "...") lines.push("");
    }
    return lines.join("\n");
  }
  window.posencPyconCode = pyconCode; // used by tests/site/check_site.py to explain failures

  function prepareCopy(root) {
    root.querySelectorAll(".language-pycon pre > code").forEach(function (code) {
      if (!code.hasAttribute("data-copy")) code.setAttribute("data-copy", pyconCode(code.textContent));
    });
  }

  let dialog = null;
  function lightbox() {
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.className = "posenc-lightbox";
    dialog.setAttribute("aria-label", "Enlarged figure");
    const close = document.createElement("button");
    close.type = "button";
    close.className = "posenc-lightbox__close md-button";
    close.textContent = "Close";
    close.addEventListener("click", function () { dialog.close(); });
    const frame = document.createElement("div");
    frame.className = "posenc-lightbox__frame";
    frame.tabIndex = 0; // scrolls sideways: reachable by keyboard
    dialog.append(close, frame);
    dialog.addEventListener("click", function (event) { if (event.target === dialog) dialog.close(); });
    document.body.append(dialog);
    return dialog;
  }

  function enlarge(img) {
    const box = lightbox();
    const frame = box.querySelector(".posenc-lightbox__frame");
    const copy = document.createElement("img");
    copy.src = img.currentSrc || img.src;
    copy.alt = img.alt;
    frame.replaceChildren(copy);
    box.showModal();
  }

  function prepareFigures(root) {
    root.querySelectorAll("figure.posenc-figure img").forEach(function (img) {
      if (img.dataset.posencZoom) return;
      img.dataset.posencZoom = "1";
      img.tabIndex = 0;
      img.setAttribute("role", "button");
      img.setAttribute("aria-haspopup", "dialog");
      img.title = "Enlarge";
      img.addEventListener("click", function () { enlarge(img); });
      img.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); enlarge(img); }
      });
    });
  }

  function prepare() {
    prepareCopy(document);
    prepareFigures(document);
  }
  if (typeof document$ !== "undefined") document$.subscribe(prepare);
  else document.addEventListener("DOMContentLoaded", prepare);
})();

// Reader affordances that Material does not give out of the box:
// 1. Copy buttons on `pycon` blocks copy only the code: the `>>> ` and `... ` prompts are removed
//    and printed output lines are left out, so what is pasted runs in Python. Material copies the
//    `data-copy` attribute of the code element when there is one (its own documented hook).
// 2. Tap (or Enter) on a figure or a notebook plot to see it at its natural size in a dialog that
//    scrolls: a notebook plot drawn for a wide page reads at its designed size on a phone too.
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

  // A figure's image (the file the browser chose: the narrow layout on a phone) or a notebook's
  // inline SVG plot, at its natural size.
  function enlarge(element) {
    const box = lightbox();
    const frame = box.querySelector(".posenc-lightbox__frame");
    let copy;
    if (element.tagName === "IMG") {
      copy = document.createElement("img");
      copy.src = element.currentSrc || element.src;
      copy.alt = element.alt;
    } else {
      copy = element.cloneNode(true);
      copy.removeAttribute("data-posenc-zoom");
    }
    frame.replaceChildren(copy);
    box.showModal();
  }

  function zoomable(element, label) {
    if (element.dataset.posencZoom) return;
    element.dataset.posencZoom = "1";
    element.setAttribute("tabindex", "0");
    element.setAttribute("role", "button");
    element.setAttribute("aria-haspopup", "dialog");
    if (label) element.setAttribute("aria-label", label);
    element.addEventListener("click", function () { enlarge(element); });
    element.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); enlarge(element); }
    });
  }

  function prepareFigures(root) {
    root.querySelectorAll("figure.posenc-figure img").forEach(function (img) {
      zoomable(img, null);
      img.title = "Enlarge";
    });
    // A notebook plot holds its own text (an accessible name that left it out would not match what
    // is seen): a tap on it enlarges it, and a button under it does the same for the keyboard.
    root.querySelectorAll(".jp-OutputArea-output svg.posenc-plot").forEach(function (svg) {
      if (svg.dataset.posencZoom) return;
      svg.dataset.posencZoom = "1";
      svg.addEventListener("click", function () { enlarge(svg); });
      const button = document.createElement("button");
      button.type = "button";
      button.className = "posenc-enlarge md-button";
      button.textContent = "Enlarge the plot";
      button.addEventListener("click", function () { enlarge(svg); });
      svg.after(button);
    });
  }

  function prepare() {
    prepareCopy(document);
    prepareFigures(document);
  }
  if (typeof document$ !== "undefined") document$.subscribe(prepare);
  else document.addEventListener("DOMContentLoaded", prepare);
})();

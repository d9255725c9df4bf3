// Typeset math with the KaTeX bundled into the site (no CDN).
// Markdown pages: pymdownx.arithmatex wraps math in .arithmatex as \( \) or \[ \].
// Notebook pages: cells keep $ $ and $$ $$ delimiters, rendered inside the notebook container.
(function () {
  function typeset() {
    if (typeof renderMathInElement !== "function") return;
    const common = { throwOnError: false };
    document.querySelectorAll(".arithmatex").forEach(function (element) {
      renderMathInElement(element, Object.assign({}, common, {
        delimiters: [
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true },
        ],
      }));
    });
    document.querySelectorAll(".jp-Notebook .jp-RenderedMarkdown").forEach(function (element) {
      renderMathInElement(element, Object.assign({}, common, {
        delimiters: [
          { left: "$$", right: "$$", display: true },
          { left: "$", right: "$", display: false },
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true },
        ],
      }));
    });
  }
  // Material's instant navigation swaps pages without a reload: document$ fires on each page.
  if (typeof document$ !== "undefined") {
    document$.subscribe(typeset);
  } else {
    document.addEventListener("DOMContentLoaded", typeset);
  }
})();

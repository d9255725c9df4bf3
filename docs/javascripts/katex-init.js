// Typeset math with the KaTeX bundled into the site (no CDN).
// Markdown pages: pymdownx.arithmatex wraps math in .arithmatex as \( \) or \[ \].
// Notebook pages: cells keep $ $ and $$ $$ delimiters, rendered inside the notebook container.
// Until an .arithmatex element is typeset it is hidden (posenc.css, under html.posenc-js, a class
// set by a one-line script in <head>), so the raw TeX never flashes; each element is marked
// data-typeset once done, and every element is revealed if KaTeX is missing or throws.
(function () {
  function reveal() {
    document.querySelectorAll(".arithmatex").forEach(function (element) {
      element.setAttribute("data-typeset", "");
    });
  }
  function typeset() {
    if (typeof renderMathInElement !== "function") return reveal();
    const common = { throwOnError: false };
    try {
      document.querySelectorAll(".arithmatex").forEach(function (element) {
        renderMathInElement(element, Object.assign({}, common, {
          delimiters: [
            { left: "\\(", right: "\\)", display: false },
            { left: "\\[", right: "\\]", display: true },
          ],
        }));
        element.setAttribute("data-typeset", "");
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
    } finally {
      reveal();
    }
  }
  // Material's instant navigation swaps pages without a reload: document$ fires on each page.
  if (typeof document$ !== "undefined") {
    document$.subscribe(typeset);
  } else {
    document.addEventListener("DOMContentLoaded", typeset);
  }
})();

// Typeset math with the KaTeX bundled into the site (no CDN), loaded only when math is near.
// Markdown pages: pymdownx.arithmatex wraps math in .arithmatex as \( \) or \[ \].
// Notebook pages: cells keep $ $ and $$ $$ delimiters, rendered inside the notebook container.
// This script is on a page only if the page has math (hooks/site_weight.py). KaTeX itself (about
// 300 kB with its stylesheet) is fetched when the first formula comes within a tenth of a screen of
// the viewport, so a first view without math in sight does not download it. Until an .arithmatex
// element is typeset it is hidden (posenc.css, under html.posenc-js), so raw TeX never flashes;
// each element is marked data-typeset once done, and every element is revealed if KaTeX fails.
// window.posencTypesetAll() loads and typesets everything at once (printing, the site checks).
(function () {
  "use strict";
  const here = document.currentScript ? document.currentScript.src : document.baseURI;
  const asset = (path) => new URL("../assets/katex/" + path, here).href;
  let loading = null;

  function reveal() {
    document.querySelectorAll(".arithmatex").forEach(function (element) {
      element.setAttribute("data-typeset", "");
    });
  }

  function script(url) {
    return new Promise(function (resolve, reject) {
      const element = document.createElement("script");
      element.src = url;
      element.onload = resolve;
      element.onerror = function () { reject(new Error("could not load " + url)); };
      document.head.append(element);
    });
  }

  function load() {
    if (!loading) {
      const style = document.createElement("link");
      style.rel = "stylesheet";
      style.href = asset("katex.min.css");
      document.head.append(style);
      loading = script(asset("katex.min.js")).then(function () { return script(asset("contrib/auto-render.min.js")); });
    }
    return loading;
  }

  function notebookMath() {
    return [...document.querySelectorAll(".jp-Notebook .jp-RenderedMarkdown")]
      .filter(function (element) { return /\$|\\\(|\\\[/.test(element.textContent); });
  }

  function typeset() {
    if (typeof renderMathInElement !== "function") return reveal();
    const common = { throwOnError: false };
    try {
      document.querySelectorAll(".arithmatex:not([data-typeset])").forEach(function (element) {
        renderMathInElement(element, Object.assign({}, common, {
          delimiters: [
            { left: "\\(", right: "\\)", display: false },
            { left: "\\[", right: "\\]", display: true },
          ],
        }));
        element.setAttribute("data-typeset", "");
      });
      notebookMath().forEach(function (element) {
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

  function typesetAll() {
    return load().then(typeset, function (error) { reveal(); throw error; });
  }
  window.posencTypesetAll = typesetAll;

  function start() {
    const targets = [...document.querySelectorAll(".arithmatex"), ...notebookMath()];
    if (targets.length === 0) return;
    if (typeof IntersectionObserver === "undefined") return typesetAll();
    const observer = new IntersectionObserver(function (entries) {
      if (entries.some(function (entry) { return entry.isIntersecting; })) {
        observer.disconnect();
        typesetAll().catch(function (error) { console.error(error); });
      }
    }, { rootMargin: "0px 0px 10% 0px" });
    targets.forEach(function (target) { observer.observe(target); });
  }
  window.addEventListener("beforeprint", function () { typesetAll(); });

  // Material's instant navigation swaps pages without a reload: document$ fires on each page.
  if (typeof document$ !== "undefined") {
    document$.subscribe(start);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

// Loads the interactive explorer on pages that contain a placeholder
//   <div class="posenc-explorer" data-widget="NAME"> static figure (the no-script fallback) </div>
// and only there: formulas.js (the pure formulas, window.posencExplorer), D3 (served from the site,
// copied from node_modules by hooks/posenc_site.py), then widgets.js, which upgrades the placeholders.
// Widget names: sinusoidal, rope-scaling, rope-rotation, alibi, t5-buckets.
(function () {
  "use strict";
  const here = document.currentScript ? document.currentScript.src : document.baseURI;
  const scripts = ["formulas.js", "../../assets/d3/d3.min.js", "widgets.js"].map((path) => new URL(path, here).href);
  let loaded = null;

  function load(url) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = url;
      script.onload = resolve;
      script.onerror = () => reject(new Error(`posenc explorer: could not load ${url}`));
      document.head.append(script);
    });
  }

  function upgradeAll() {
    const placeholders = document.querySelectorAll(".posenc-explorer:not([data-upgraded])");
    if (placeholders.length === 0) return;
    loaded = loaded || scripts.reduce((previous, url) => previous.then(() => load(url)), Promise.resolve());
    loaded
      .then(() => window.posencExplorerWidgets.upgrade(placeholders))
      .catch((error) => console.error(error));
  }

  // The scripts (about 200 kB with D3) load when a placeholder comes within a screen of the
  // viewport, not with the page: a first view of a page whose widget is further down skips them.
  function whenNear() {
    const placeholders = document.querySelectorAll(".posenc-explorer:not([data-upgraded])");
    if (placeholders.length === 0) return;
    if (typeof IntersectionObserver === "undefined") return upgradeAll();
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) {
        observer.disconnect();
        upgradeAll();
      }
    }, { rootMargin: "0px 0px 100% 0px" });
    placeholders.forEach((placeholder) => observer.observe(placeholder));
  }

  // Printing before the widgets loaded: their static figures' images sit in <noscript>
  // (hooks/site_weight.py), which shows nothing while scripts run; put them back as images.
  window.addEventListener("beforeprint", () => {
    for (const holder of document.querySelectorAll(".posenc-explorer:not([data-upgraded]) noscript")) {
      const template = document.createElement("template");
      template.innerHTML = holder.textContent;
      template.content.querySelectorAll("img").forEach((img) => { img.loading = "eager"; });
      holder.replaceWith(template.content);
    }
  });

  // Material's instant navigation swaps pages without a reload: document$ fires on each page.
  if (typeof document$ !== "undefined") {
    document$.subscribe(whenNear);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", whenNear);
  } else {
    whenNear();
  }
})();

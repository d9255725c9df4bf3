// Loads the interactive explorer on pages that contain a placeholder
//   <div class="posenc-explorer" data-widget="NAME"> static figure (the no-script fallback) </div>
// and only there, when a placeholder comes within a screen of the viewport. Two groups of scripts,
// each run in the order given:
//   core: pyvalues.js (Python's values and posenc's checks), rope_scaling.js (posenc's RoPE scaling
//     rules), formulas.js (the pure formulas, window.posencExplorer), D3 (served from the site, copied
//     from node_modules by hooks/posenc_site.py), widgets.js (the widgets' shared scaffolding, which
//     upgrades the placeholders) and the widget families widgets_sinusoidal.js, widgets_rope.js and
//     widgets_bias.js;
//   config, for the config inspector only (its placeholder near): json_values.js (JSON read into Python's values),
//     rope_two_way.js, rope_table.js, rope_ntk_alpha.js, rope_layer.js, rope_sites.js, rope_text_part.js,
//     rope_params.js, rope_class_rope.js, rope_plan.js and rope_config.js
//     (posenc's read_config and inspect's warnings), rope_engines.js (the engines' names and warnings), the model-type
//     table and the zoo (assets/posenc/rope-data.js, written by hooks/rope_data.py), rope_vision_towers.js and
//     rope_vision.js (read_vision_config), inspector_chart.js, inspector_words.js, inspector_vision.js,
//     inspector_results.js (each kind of layer's section and the findings) and inspector.js (the widget).
// Widget names: sinusoidal, rope-scaling, rope-rotation, alibi, t5-buckets; rope-inspector.
(function () {
  "use strict";
  const here = document.currentScript ? document.currentScript.src : document.baseURI;
  const url = (path) => new URL(path, here).href;
  const GROUPS = {
    core: ["pyvalues.js", "rope_scaling.js", "formulas.js", "../../assets/d3/d3.min.js", "widgets.js",
      "widgets_sinusoidal.js", "widgets_rope.js", "widgets_bias.js"],
    config: ["json_values.js", "rope_two_way.js", "rope_table.js", "rope_ntk_alpha.js",
      "rope_layer.js", "rope_sites.js", "rope_text_part.js",
      "rope_params.js", "rope_class_rope.js", "rope_plan.js",
      "rope_config.js", "rope_engines.js",
      "rope_vision_towers.js", "rope_vision.js", "../../assets/posenc/rope-data.js", "inspector_chart.js", "inspector_words.js", "inspector_vision.js",
      "inspector_results.js", "inspector.js"],
  };
  const CONFIG_WIDGETS = ["rope-inspector"];
  const loading = {};

  // Fetched side by side, run in the order given (async = false).
  function load(src) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.async = false;
      script.onload = resolve;
      script.onerror = () => reject(new Error(`posenc explorer: could not load ${src}`));
      document.head.append(script);
    });
  }

  function loadGroup(name) {
    const before = name === "config" ? loadGroup("core") : Promise.resolve();
    loading[name] = loading[name] || before.then(() => Promise.all(GROUPS[name].map((path) => load(url(path)))));
    return loading[name];
  }

  // Upgrade every placeholder whose scripts are there (widgets.js skips the names it does not know yet).
  function upgrade(group) {
    loadGroup(group)
      .then(() => window.posencExplorerWidgets.upgrade(document.querySelectorAll(".posenc-explorer:not([data-upgraded])")))
      .catch((error) => console.error(error));
  }

  // The core scripts (about 200 kB with D3) load when a placeholder comes within a screen of the
  // viewport, not with the page: a first view of a page whose widget is further down skips them.
  // The inspector's (about 200 kB more, most of it the table of model types) wait for the inspector.
  function whenNear() {
    const placeholders = document.querySelectorAll(".posenc-explorer:not([data-upgraded])");
    if (placeholders.length === 0) return;
    const needs = (host) => (CONFIG_WIDGETS.includes(host.dataset.widget) ? "config" : "core");
    if (typeof IntersectionObserver === "undefined") {
      new Set([...placeholders].map(needs)).forEach(upgrade);
      return;
    }
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries.filter((e) => e.isIntersecting)) {
        observer.unobserve(entry.target);
        upgrade(needs(entry.target));
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

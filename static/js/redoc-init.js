/* Starts ReDoc with the schema URL and settings its page carries in data attributes: a static file,
   because the Content-Security-Policy allows no inline script (config/csp.py). */
(function () {
  "use strict";
  var container = document.getElementById("redoc-container");
  // ReDoc's "Authorizations:" and similar sub-headings are <h5> right under an <h2>: level 3 for
  // assistive technology (axe: heading order), also after each re-render.
  new MutationObserver(function () {
    container.querySelectorAll("h5").forEach(function (h) {
      if (h.getAttribute("aria-level") !== "3") h.setAttribute("aria-level", "3");
    });
  }).observe(container, { childList: true, subtree: true });
  Redoc.init(container.dataset.schemaUrl, JSON.parse(container.dataset.settings || "{}"), container);
})();

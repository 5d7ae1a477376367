/* Accessibility for Swagger UI (axe): a static file, as the Content-Security-Policy allows no inline
   script (config/csp.py). */
// Swagger UI puts its operations in a <main> but leaves the parts around it outside any landmark,
// and has a first-level title with its tags as third-level headings (a skipped level): those parts
// become labelled regions and the tags second-level headings, also after each re-render.
(function () {
  var root = document.getElementById("swagger-ui");
  function fix() {
    [[".information-container", "About the API"], [".scheme-container", "Servers and authorization"], [".models", "Schemas"]].forEach(function (pair) {
      root.querySelectorAll(pair[0]).forEach(function (box) {
        if (box.getAttribute("role") !== "region") { box.setAttribute("role", "region"); box.setAttribute("aria-label", pair[1]); }
      });
    });
    root.querySelectorAll("h3.opblock-tag, .models > h4, section.models h4").forEach(function (h) {
      if (h.getAttribute("aria-level") !== "2") h.setAttribute("aria-level", "2");
    });
  }
  new MutationObserver(fix).observe(root, { childList: true, subtree: true });
})();

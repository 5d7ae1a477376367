/* Starts ReDoc with the schema URL and settings its page carries in data attributes: a static file,
   because the Content-Security-Policy allows no inline script (trainer/csp.py). */
(function () {
  "use strict";
  var container = document.getElementById("redoc-container");
  Redoc.init(container.dataset.schemaUrl, JSON.parse(container.dataset.settings || "{}"), container);
})();

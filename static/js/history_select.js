/* Dashboard: clicking a point of the history chart ticks (or unticks) its run in the "Compare runs"
 * form below the chart, and opens it. The form works without this script (plain checkboxes). */
(function () {
  "use strict";
  var chart = document.getElementById("history-chart");
  var form = document.getElementById("history-select");
  var data = document.getElementById("history-data");
  if (!chart || !form || !data) return;
  var points = JSON.parse(data.textContent);
  var count = document.getElementById("history-select-count");

  function boxes() {
    return Array.prototype.slice.call(form.querySelectorAll("input[name=run]"));
  }

  function say() {
    var n = boxes().filter(function (b) { return b.checked; }).length;
    if (count) count.textContent = n === 1 ? "1 run chosen." : n + " runs chosen.";
  }

  form.addEventListener("change", say);
  chart.addEventListener("click", function () {
    // dashboard.js keeps the uPlot instance on the chart element; its cursor is on the nearest point.
    var plot = chart.historyPlot;
    var i = plot && plot.cursor ? plot.cursor.idx : null;
    if (i === null || i === undefined || !points[i]) return;
    var box = form.querySelector('input[name=run][value="' + points[i].run + '"]');
    if (!box) return;
    box.checked = !box.checked;
    form.querySelector("details").open = true;
    say();
  });
})();

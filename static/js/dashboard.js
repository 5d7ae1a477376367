/* History chart of the evaluation dashboard: NDCG@10 and accuracy@5 (the collection's k, from data-ndcg-label and data-accuracy-label) on one 0–1 axis (uPlot, vendored).
 * Without JavaScript the same data is the table below the chart, which stays open. */
(function () {
  "use strict";
  var dataNode = document.getElementById("history-data");
  var target = document.getElementById("history-chart");
  if (!dataNode || !target || typeof uPlot === "undefined") return;
  var points = JSON.parse(dataNode.textContent);
  if (!points.length) return;
  var changesNode = document.getElementById("history-changes");
  var changes = changesNode ? JSON.parse(changesNode.textContent) : [];

  var xs = points.map(function (p) { return p.t; });
  var ndcg = points.map(function (p) { return p.ndcg; });
  var accuracy = points.map(function (p) { return p.accuracy; });
  var LABEL_ALL_UP_TO = 15; // with more points, only the latest is labelled (hover shows any)

  function pointLabel(p) {
    return p.version + " · " + (p.labels === null ? "?" : p.labels.toLocaleString()) + " labels";
  }

  var info = document.createElement("p");
  info.className = "chart-point-info";
  info.setAttribute("aria-live", "polite");

  function labelPoints(u) {
    var ctx = u.ctx;
    var first = points.length > LABEL_ALL_UP_TO ? points.length - 1 : 0;
    ctx.save();
    ctx.font = Math.round(11 * devicePixelRatio) + "px system-ui, sans-serif";
    ctx.fillStyle = "#1d2330";
    ctx.textAlign = "center";
    for (var i = first; i < points.length; i++) {
      if (ndcg[i] === null) continue;
      var x = u.valToPos(xs[i], "x", true);
      var y = u.valToPos(ndcg[i], "y", true);
      ctx.fillText(pointLabel(points[i]), x, y - 10 * devicePixelRatio);
    }
    ctx.restore();
  }

  // A dashed vertical line where the champion changed, labelled with the versions (drawn under the points).
  function markChanges(u) {
    var ctx = u.ctx, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
    ctx.save();
    ctx.strokeStyle = "#6b4fbb";
    ctx.fillStyle = "#4b3590";
    ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.font = Math.round(11 * devicePixelRatio) + "px system-ui, sans-serif";
    ctx.textAlign = "left";
    changes.forEach(function (c) {
      if (c.t < u.scales.x.min || c.t > u.scales.x.max) return;
      var x = u.valToPos(c.t, "x", true);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      ctx.fillText(c.text, x + 3 * devicePixelRatio, top + 12 * devicePixelRatio);
    });
    ctx.restore();
  }

  function size() {
    return { width: Math.max(280, target.parentNode.clientWidth - 8), height: 320 };
  }

  var opts = Object.assign(size(), {
    scales: {
      // Pad the time axis so edge labels stay readable; one run alone gets a two-hour window, not years.
      x: (function () {
        var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs);
        var pad = lo === hi ? 3600 : (hi - lo) * 0.08;
        return { time: true, auto: false, min: lo - pad, max: hi + pad };
      })(),
      y: { range: [0, 1] },
    },
    axes: [{}, { label: "score (0 = worst, 1 = best)", values: function (u, v) { return v.map(function (n) { return n.toFixed(1); }); } }],
    series: [
      {},
      { label: target.dataset.ndcgLabel || "NDCG", stroke: "#1f5fbf", width: 2, points: { show: true, size: 7, fill: "#1f5fbf" },
        value: function (u, v) { return v === null ? "–" : v.toFixed(3); } },
      { label: target.dataset.accuracyLabel || "Accuracy", stroke: "#8a5a00", width: 2, dash: [6, 4], points: { show: true, size: 7, fill: "#fff" },
        value: function (u, v) { return v === null ? "–" : v.toFixed(3); } },
    ],
    hooks: {
      draw: [markChanges, labelPoints],
      setCursor: [function (u) {
        var i = u.cursor.idx;
        info.textContent = i === null || i === undefined ? "" :
          points[i].date + ": " + pointLabel(points[i]) + ", NDCG " + (ndcg[i] === null ? "–" : ndcg[i].toFixed(3)) +
          ", accuracy " + (accuracy[i] === null ? "–" : accuracy[i].toFixed(3));
      }],
    },
  });

  target.hidden = false;
  var plot = new uPlot(opts, [xs, ndcg, accuracy], target);
  target.historyPlot = plot; // history_select.js: clicking a point chooses its run for comparison
  target.appendChild(info);
  var table = document.querySelector(".history-table");
  if (table) table.removeAttribute("open");
  window.addEventListener("resize", function () { plot.setSize(size()); });
})();

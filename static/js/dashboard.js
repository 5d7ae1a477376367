/* History chart of the evaluation dashboard: NDCG@10 and accuracy@5 (the collection's k, from
 * data-ndcg-label and data-accuracy-label) on one 0–1 axis (uPlot, vendored).
 *
 * Readable from 1 run to hundreds: the time axis keeps its labels apart (uPlot's tick spacing), point
 * labels ("v3 · 1,204 labels") are drawn only where they fit without overlapping, and points shrink away
 * when they would crowd. Each run is read in a tooltip, by hovering, or by focusing the chart (Tab) and
 * moving with ←/→ (Home/End: first/last); the line under the chart says the same for screen readers.
 * Dashed lines mark champion changes; shaded bands the online tests (start to stop, or to the right edge
 * while running), labelled "online: v3 vs v2" where the label fits. The legend names the two series (no values, so never "–").
 * Without JavaScript the same data is the table below the chart, which stays open.
 */
(function () {
  "use strict";
  var dataNode = document.getElementById("history-data");
  var target = document.getElementById("history-chart");
  if (!dataNode || !target || typeof uPlot === "undefined") return;
  var points = JSON.parse(dataNode.textContent);
  if (!points.length) return;
  var changesNode = document.getElementById("history-changes");
  var changes = changesNode ? JSON.parse(changesNode.textContent) : [];
  var onlineNode = document.getElementById("history-online");
  var online = onlineNode ? JSON.parse(onlineNode.textContent) : [];

  var xs = points.map(function (p) { return p.t; });
  var ndcg = points.map(function (p) { return p.ndcg; });
  var accuracy = points.map(function (p) { return p.accuracy; });
  var ndcgName = target.dataset.ndcgLabel || "NDCG";
  var accuracyName = target.dataset.accuracyLabel || "Accuracy";
  var FONT = "system-ui, sans-serif";

  function figure(v) { return v === null || v === undefined ? "none" : v.toFixed(3); }

  function pointLabel(p) {
    return p.version + " · " + (p.labels === null ? "?" : p.labels.toLocaleString("en")) + " labels";
  }

  function describe(i) {
    var p = points[i];
    return p.date + ": " + pointLabel(p) + ", " + ndcgName + " " + figure(ndcg[i]) + ", " +
      accuracyName + " " + figure(accuracy[i]) + " (run " + (i + 1) + " of " + points.length + ")";
  }

  var info = document.createElement("p");
  info.className = "chart-point-info";
  info.id = "history-chart-info";
  info.setAttribute("aria-live", "polite");

  var selected = null; // index of the run read last (hover or keys)

  var tooltip = document.createElement("div");
  tooltip.className = "chart-tooltip";
  tooltip.hidden = true;
  tooltip.setAttribute("aria-hidden", "true"); // the info line says the same to screen readers

  // Text drawn on the canvas in this redraw, as boxes in canvas px: a label goes only where it overlaps
  // none of them (online-test labels, then change labels, then point labels from the latest back) and stays
  // in the plot.
  var boxes = [];

  // Point labels keep apart horizontally whatever their height (stacked labels read as clutter);
  // a point label and a change label only must not overlap.
  function fits(box) {
    return !boxes.some(function (b) {
      var apart = box.x1 + 6 <= b.x0 || b.x1 + 6 <= box.x0;
      if (apart) return false;
      if (box.point && b.point) return true;
      return box.y0 < b.y1 + 2 && box.y1 > b.y0 - 2;
    });
  }

  function place(ctx, text, x, candidatesY, u, point) {
    var dpr = devicePixelRatio, w = ctx.measureText(text).width, h = 11 * dpr;
    var left = u.bbox.left, right = u.bbox.left + u.bbox.width;
    var x0 = Math.min(Math.max(x, left), right - w);
    for (var n = 0; n < candidatesY.length; n++) {
      var y = candidatesY[n]; // baseline
      if (y - h < u.bbox.top || y > u.bbox.top + u.bbox.height) continue;
      var box = { x0: x0, x1: x0 + w, y0: y - h, y1: y + 2 * dpr, point: point };
      if (fits(box)) {
        boxes.push(box);
        ctx.fillText(text, x0, y);
        return true;
      }
    }
    return false;
  }

  function labelPoints(u) {
    var ctx = u.ctx, dpr = devicePixelRatio;
    ctx.save();
    ctx.font = Math.round(11 * dpr) + "px " + FONT;
    ctx.fillStyle = "#1d2330";
    ctx.textAlign = "left";
    for (var i = points.length - 1; i >= 0; i--) {
      if (ndcg[i] === null) continue;
      var text = pointLabel(points[i]);
      var x = u.valToPos(xs[i], "x", true), y = u.valToPos(ndcg[i], "y", true);
      var w = ctx.measureText(text).width;
      place(ctx, text, x - w / 2, [y - 10 * dpr, y + 20 * dpr, y + 34 * dpr], u, true);
    }
    ctx.restore();
  }

  // Dashed lines this far apart at least (CSS px): two changes minutes apart on a chart of weeks (the
  // first champion, set when the ranker was made, and the first promotion) would be one line otherwise.
  var CHANGE_GAP = 6;

  // The x of each change's line, in canvas px: at its time, moved right just enough to keep CHANGE_GAP
  // from the line before it (and back left from the plot's right edge), so every change is its own line.
  function changePositions(u) {
    var dpr = devicePixelRatio, gap = CHANGE_GAP * dpr;
    var left = u.bbox.left, right = u.bbox.left + u.bbox.width;
    var xs = changes.map(function (c) { return Math.min(Math.max(u.valToPos(c.t, "x", true), left), right); });
    for (var i = 1; i < xs.length; i++) xs[i] = Math.max(xs[i], xs[i - 1] + gap);
    for (var j = xs.length - 1; j >= 0; j--) {
      var limit = j === xs.length - 1 ? right : xs[j + 1] - gap;
      xs[j] = Math.max(left, Math.min(xs[j], limit));
    }
    return xs;
  }

  // A dashed vertical line where the champion changed, labelled with the versions where the label fits.
  // One line per change listed under the chart ("Champion changes (n)"), whatever the time range.
  function markChanges(u) {
    var ctx = u.ctx, dpr = devicePixelRatio, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
    ctx.save();
    ctx.strokeStyle = "#6b4fbb";
    ctx.fillStyle = "#4b3590";
    ctx.setLineDash([4 * dpr, 4 * dpr]);
    ctx.font = Math.round(11 * dpr) + "px " + FONT;
    ctx.textAlign = "left";
    var positions = changePositions(u);
    changes.forEach(function (c, i) {
      var x = positions[i];
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      place(ctx, c.text, x + 3 * dpr, [top + 12 * dpr, top + 26 * dpr], u, false);
    });
    ctx.restore();
  }

  // A shaded band per online test, under the lines (drawn first), at least 2 px wide.
  function markOnline(u) {
    var ctx = u.ctx, dpr = devicePixelRatio, top = u.bbox.top, height = u.bbox.height;
    var left = u.bbox.left, right = u.bbox.left + u.bbox.width;
    boxes = []; // the first to draw in a redraw (drawAxes comes before draw)
    ctx.save();
    ctx.font = Math.round(11 * dpr) + "px " + FONT;
    ctx.textAlign = "left";
    online.forEach(function (o) {
      var x0 = Math.min(Math.max(u.valToPos(o.start, "x", true), left), right);
      var x1 = o.end === null ? right : Math.min(Math.max(u.valToPos(o.end, "x", true), left), right);
      ctx.fillStyle = "rgba(31, 143, 95, 0.12)";
      ctx.fillRect(x0, top, Math.max(x1 - x0, 2 * dpr), height);
      ctx.fillStyle = "#14613f";
      place(ctx, o.label, x0 + 3 * dpr, [top + height - 8 * dpr, top + height - 22 * dpr], u, false);
    });
    ctx.restore();
  }

  function showTooltip(u, i) {
    if (i === null || i === undefined) {
      tooltip.hidden = true;
      return;
    }
    var p = points[i];
    tooltip.textContent = "";
    [p.date, pointLabel(p), ndcgName + ": " + figure(ndcg[i]), accuracyName + ": " + figure(accuracy[i])]
      .forEach(function (line, n) {
        var div = document.createElement("div");
        if (n === 0) div.className = "chart-tooltip-date";
        div.textContent = line;
        tooltip.appendChild(div);
      });
    tooltip.hidden = false;
    var x = u.valToPos(xs[i], "x") + u.over.offsetLeft;
    var y = u.valToPos(ndcg[i] === null ? 0 : ndcg[i], "y") + u.over.offsetTop;
    var w = tooltip.offsetWidth, h = tooltip.offsetHeight, width = target.clientWidth;
    var left = x + 12 + w > width ? x - 12 - w : x + 12;
    tooltip.style.left = Math.max(0, left) + "px";
    tooltip.style.top = Math.max(0, y - h - 8) + "px";
  }

  // Points are drawn while they are at least 12 px apart on average (one run alone is a point, not a line).
  function roomForPoints(u) { return points.length * 12 * devicePixelRatio <= u.bbox.width; }

  function size() {
    // The chart's own box (the card's width less its padding), so nothing is cut off at the right.
    return { width: Math.max(240, target.clientWidth), height: 320 };
  }

  target.hidden = false; // before measuring it
  var opts = Object.assign(size(), {
    scales: {
      // Pad the time axis so edge points stay readable; one run alone gets a two-hour window, not years.
      // The champion changes are in the range too: the first champion is set before the first run.
      x: (function () {
        var ts = xs.concat(changes.map(function (c) { return c.t; }), online.map(function (o) { return o.start; }));
        var lo = Math.min.apply(null, ts), hi = Math.max.apply(null, ts);
        // At least two hours in view: a run a minute after its champion was set otherwise gets a
        // one-minute axis labelled in fractions of a second (":24.000").
        var pad = Math.max((hi - lo) * 0.08, (7200 - (hi - lo)) / 2);
        return { time: true, auto: false, min: lo - pad, max: hi + pad };
      })(),
      y: { range: [0, 1] },
    },
    axes: [
      { space: 90, stroke: "#1d2330", grid: { stroke: "#e5e7eb" } }, // at least 90 px between time labels
      { label: "score (0 = worst, 1 = best)", space: 30, stroke: "#1d2330", grid: { stroke: "#e5e7eb" },
        values: function (u, v) { return v.map(function (n) { return n.toFixed(1); }); } },
    ],
    legend: { live: false }, // names only: values are in the tooltip and the line under the chart
    cursor: { points: { size: 10 } },
    series: [
      { label: "Time" },
      { label: ndcgName, stroke: "#1f5fbf", width: 2, points: { show: roomForPoints, size: 7, fill: "#1f5fbf" } },
      { label: accuracyName, stroke: "#8a5a00", width: 2, dash: [6, 4], points: { show: roomForPoints, size: 7, fill: "#fff" } },
    ],
    hooks: {
      drawAxes: [markOnline],
      draw: [markChanges, labelPoints],
      setCursor: [function (u) {
        var i = u.cursor.idx;
        showTooltip(u, i);
        if (i !== null && i !== undefined) {
          selected = i;
          info.textContent = describe(i);
        }
      }],
    },
  });

  target.removeAttribute("aria-hidden");
  var plot = new uPlot(opts, [xs, ndcg, accuracy], target);
  target.historyPlot = plot; // history_select.js: clicking a point chooses its run for comparison
  target.appendChild(tooltip);
  target.insertAdjacentElement("afterend", info);

  // Keyboard: the chart is one tab stop; arrows move from run to run.
  target.tabIndex = 0;
  target.setAttribute("role", "group");
  target.setAttribute("aria-label", "History chart of " + ndcgName + " and " + accuracyName + ", " +
    points.length + " run" + (points.length === 1 ? "" : "s") + ". Use the left and right arrow keys to read each run.");
  target.setAttribute("aria-describedby", info.id);

  function select(i) {
    i = Math.max(0, Math.min(points.length - 1, i));
    plot.setCursor({ left: plot.valToPos(xs[i], "x"), top: plot.valToPos(ndcg[i] === null ? 0 : ndcg[i], "y") });
  }

  target.addEventListener("focus", function () {
    // Only keyboard focus picks a run: a mouse click focuses the chart too, and moving the cursor then
    // would take it away from the point clicked (history_select.js reads it).
    if (!target.matches(":focus-visible")) return;
    select(selected === null ? points.length - 1 : selected);
  });
  target.addEventListener("blur", function () { tooltip.hidden = true; });
  target.addEventListener("keydown", function (event) {
    var i = selected === null ? points.length - 1 : selected;
    var step = { ArrowLeft: -1, ArrowRight: 1, ArrowDown: -1, ArrowUp: 1 }[event.key];
    if (step) i += step;
    else if (event.key === "Home") i = 0;
    else if (event.key === "End") i = points.length - 1;
    else if (event.key === "Escape") { tooltip.hidden = true; return; }
    else return;
    event.preventDefault();
    select(i);
  });

  var table = document.querySelector(".history-table");
  if (table) table.removeAttribute("open");
  window.addEventListener("resize", function () { plot.setSize(size()); });
})();

/*
 * The version page's online test block (templates/trainer/online_test.html): htmx swaps the whole block
 * when its Start, Stop or Refresh is used, which drops the keyboard focus (the pressed button is gone) to the
 * page's top. After the swap, focus moves to the block's heading (tabindex -1), so Tab goes on from the block
 * and a screen reader reads where it is.
 */
(function () {
  "use strict";
  document.addEventListener("htmx:afterSettle", function (event) {
    var path = event.detail && event.detail.pathInfo && event.detail.pathInfo.requestPath;
    if (!path || path.indexOf("/online-test/") === -1) return;
    var heading = document.getElementById("online-heading");
    if (heading) heading.focus({ preventScroll: true });
  });
})();

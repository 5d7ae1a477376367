/* A table wider than the screen scrolls inside its box (.table-scroll, a labelled region one can focus
 * and move with the arrow keys). On a phone nothing showed that it does: the table looked cut off. Each
 * such box that really overflows gets a visible line above it, "Scroll sideways to see every column",
 * which the region names as its description; the line goes away when the box is wide enough (resize,
 * rotation) and when the reader has reached the right end.
 */
(function () {
  "use strict";
  var boxes = Array.prototype.slice.call(document.querySelectorAll(".table-scroll"));
  if (!boxes.length) return;

  boxes.forEach(function (box, i) {
    var hint = document.createElement("p");
    hint.className = "scroll-hint";
    hint.id = box.id ? box.id + "-scroll-hint" : "table-scroll-hint-" + (i + 1);
    hint.textContent = "Scroll sideways to see every column →";
    hint.hidden = true;
    box.parentNode.insertBefore(hint, box);
    box.scrollHint = hint;
  });

  function update(box) {
    var hint = box.scrollHint;
    var overflows = box.scrollWidth > box.clientWidth + 1;
    var atEnd = box.scrollLeft + box.clientWidth >= box.scrollWidth - 1;
    hint.hidden = !overflows;
    hint.textContent = atEnd && box.scrollLeft > 0 ? "← Scroll back for the first columns" : "Scroll sideways to see every column →";
    var described = (box.getAttribute("aria-describedby") || "").split(" ").filter(function (id) {
      return id && id !== hint.id;
    });
    if (overflows) described.push(hint.id);
    if (described.length) box.setAttribute("aria-describedby", described.join(" "));
    else box.removeAttribute("aria-describedby");
    box.classList.toggle("scrolls", overflows);
  }

  boxes.forEach(function (box) {
    update(box);
    box.addEventListener("scroll", function () { update(box); }, { passive: true });
  });
  window.addEventListener("resize", function () { boxes.forEach(update); });
})();

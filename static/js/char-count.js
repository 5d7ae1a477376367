/* Text fields with a limit show it: "123 / 500" under the field, updated as one types.
 *
 * A field's maxlength stops typing at the limit, and a paste longer than the room left is cut short by the
 * browser without a word: the counter shows the limit all along and says when a paste was cut. The field
 * points at its counter (aria-describedby), so a screen reader reads it with the field. Fields that swap
 * in later (a rating card htmx returns) get theirs too. Usernames and passwords are left alone. The server
 * refuses longer text with an error naming the field (for pages without JavaScript, and scripts).
 */
(function () {
  "use strict";
  var FIELDS = 'textarea[maxlength], input[maxlength]:is([type=text], [type=url], [type=search], :not([type]))';

  function counterOf(field) { return document.getElementById(field.id + "-count"); }

  function show(field, note) {
    var counter = counterOf(field);
    if (!counter) return;
    var max = field.maxLength, used = field.value.length;
    counter.textContent = used + " / " + max + (note ? " " + note : "");
    counter.classList.toggle("at-limit", used >= max);
  }

  function attach(field) {
    if (!field.id || field.dataset.counted || field.maxLength <= 0) return;
    if (/username|password/.test(field.autocomplete || "")) return;
    field.dataset.counted = "true";
    var counter = counterOf(field);
    if (!counter) {
      counter = document.createElement("small");
      counter.id = field.id + "-count";
      counter.className = "char-count";
      field.insertAdjacentElement("afterend", counter);
    }
    var described = (field.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
    if (described.indexOf(counter.id) < 0) described.push(counter.id);
    field.setAttribute("aria-describedby", described.join(" "));
    field.addEventListener("input", function () { show(field); });
    field.addEventListener("paste", function (event) {
      var pasted = (event.clipboardData && event.clipboardData.getData("text")) || "";
      var room = field.maxLength - (field.value.length - (field.selectionEnd - field.selectionStart));
      if (pasted.length > room) {
        setTimeout(function () {
          show(field, "(the pasted text was cut to fit: " + (pasted.length - room) + " characters left out)");
        });
      }
    });
    show(field);
  }

  function attachAll(root) {
    if (!root || !root.querySelectorAll) return;
    if (root.matches && root.matches(FIELDS)) attach(root);
    Array.prototype.forEach.call(root.querySelectorAll(FIELDS), attach);
  }

  attachAll(document);
  document.addEventListener("htmx:load", function (event) { attachAll(event.detail.elt); });
})();

/* Rating keys pressed while the next question is on its way are kept, not lost.
 *
 * After "n" (next question) the page is leaving: a digit pressed then used to rate the old page's card
 * (a save the navigation cut short) or fell between the two pages. rating.js keeps such a key here
 * (sessionStorage, for this tab) and the next rating page applies it once its cards are in. This script
 * is loaded in the page's head, not deferred, so it also catches the digits pressed while the new page
 * is still loading, before rating.js runs; rating.js takes them all (``ratingKeys.take``).
 * A page with nothing to rate (All done) says that the keys were not used, instead of dropping them.
 */
(function () {
  "use strict";
  var STORE = "rating-keys";
  var MAX_AGE_MS = 20000; // older keys belong to an earlier walk (a navigation that never arrived)
  var DIGIT = /^[0-3]$/;
  var early = []; // digits pressed on this page before rating.js took over
  var taken = false;

  function typing(target) {
    return target && target.closest && target.closest("input[type=text], textarea, select, [contenteditable]");
  }

  function stored() {
    try {
      var entry = JSON.parse(window.sessionStorage.getItem(STORE) || "null");
      window.sessionStorage.removeItem(STORE);
      if (entry && Date.now() - entry.at <= MAX_AGE_MS && Array.isArray(entry.keys)) return entry.keys;
    } catch (e) { /* storage off or unreadable: nothing kept */ }
    return [];
  }

  function onKey(event) {
    if (taken || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (!DIGIT.test(event.key)) return;
    event.preventDefault();
    early.push(event.key);
  }
  document.addEventListener("keydown", onKey);

  function say(text) {
    var note = document.getElementById("keys-note");
    if (!note) return;
    note.textContent = text;
    note.hidden = false;
  }

  function keyWords(keys) {
    return (keys.length === 1 ? "The key " : "The keys ") + keys.join(", ");
  }

  window.ratingKeys = {
    /* The page is leaving for the next question: keep this digit for it. Returns whether it was kept. */
    keep: function (key) {
      try {
        var entry = JSON.parse(window.sessionStorage.getItem(STORE) || "null");
        var keys = entry && Date.now() - entry.at <= MAX_AGE_MS ? entry.keys : [];
        keys.push(key);
        window.sessionStorage.setItem(STORE, JSON.stringify({ at: Date.now(), keys: keys }));
        return true;
      } catch (e) {
        return false;
      }
    },
    /* rating.js is ready: the digits kept for this page, in the order they were pressed. */
    take: function () {
      taken = true;
      document.removeEventListener("keydown", onKey);
      return stored().concat(early.splice(0));
    },
    say: say,
    keyWords: keyWords,
  };

  // No rating form on this page (All done, an error): the kept keys cannot rate anything here; say so.
  document.addEventListener("DOMContentLoaded", function () {
    if (document.getElementById("rating-form")) return;
    var keys = window.ratingKeys.take();
    if (keys.length) say(keyWords(keys) + " you pressed did not rate anything: there is no answer to rate here.");
  });
})();

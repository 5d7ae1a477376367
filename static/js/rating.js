/* Rating page: keyboard control, save states and retries on top of htmx, and long items made readable.
 *
 * Saving itself is htmx (each star choice posts at once and the server returns the answer's card);
 * this script adds keys (0–3 rate and move on, j/k or arrows move, u undo, n next question, s skip),
 * shows "Saving…"/"Saved"/"Not saved" on each card, and retries a save that failed on the network
 * (or with a server error) with growing delays, with a "Retry now" button meanwhile.
 *
 * Long items: the question sits in a sticky header (clamped to a few lines, with "Show the whole question");
 * a long answer is folded to a few lines with "Show more". On a narrow screen (a phone) one answer
 * shows at a time, with Previous/Next buttons, swipes, and large 0–3 targets; choosing a grade moves on.
 * Without JavaScript none of this applies: everything is shown, and the page is one plain form.
 *
 * Keys pressed after "n", while the next question loads, are kept for it (rating-keys.js) and applied
 * here once its cards are in.
 */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var form = document.getElementById("rating-form");
  if (!form || !window.htmx) return;

  var RETRY_DELAYS_MS = [2000, 4000, 8000, 15000, 30000];
  var attempts = {}; // answer id -> failed attempts in a row
  var timers = {}; // answer id -> pending retry timer
  var undoStack = []; // answer ids in the order the rater rated them on this page
  var unratedAtLoad = {}; // answer id -> true when it had no rating when the page loaded
  var counted = {};
  var current = null; // answer id of the highlighted card
  var leaving = false; // "n" was pressed: the next question is loading, digits are kept for it
  var kept = window.ratingKeys; // rating-keys.js (in the page's head)

  function cards() { return Array.prototype.slice.call(form.querySelectorAll(".answer-card")); }
  function cardOf(id) { return document.getElementById("answer-" + id); }
  function currentCard() { return (current && cardOf(current)) || cards()[0] || null; }

  var ONE_AT_A_TIME = window.matchMedia("(max-width: 40rem)");
  var LONG_ANSWER_PX = 260; // taller than this (about 10 lines), an answer is folded with "Show more"
  var expanded = {}; // answer id -> true once the rater unfolded it (kept when htmx replaces the card)
  var pager = document.getElementById("card-pager");
  var head = document.getElementById("task-head");

  function oneAtATime() { return form.classList.contains("one-at-a-time"); }

  function setCurrent(card, focus) {
    if (!card) return;
    current = card.dataset.answer;
    var list = cards();
    list.forEach(function (c) { c.classList.toggle("is-current", c === card); });
    foldLongAnswer(card);
    updatePager();
    if (focus) {
      card.focus({ preventScroll: true });
      if (oneAtATime()) window.scrollTo({ top: Math.max(0, form.offsetTop - headHeight() - 8) });
      else card.scrollIntoView({ block: "nearest" });
    }
  }

  function updatePager() {
    if (!pager) return;
    var list = cards();
    var i = list.indexOf(currentCard());
    document.getElementById("card-position").textContent = "Answer " + (i + 1) + " of " + list.length;
    document.getElementById("previous-answer").disabled = i <= 0;
    document.getElementById("next-answer").disabled = i >= list.length - 1;
  }

  function headHeight() { return head ? head.getBoundingClientRect().height : 0; }

  // Cards, and whatever Tab focuses, scroll into view below the sticky header (and above the phone's
  // sticky pager), not under them.
  function trackHeadHeight() {
    var root = document.documentElement, height = Math.ceil(headHeight());
    root.style.setProperty("--head-height", height + "px");
    root.style.scrollPaddingTop = height + 8 + "px";
    root.style.scrollPaddingBottom = pager && !pager.hidden ? pager.getBoundingClientRect().height + 8 + "px" : "";
  }

  // A long answer is folded to a few lines; its button unfolds it (and folds it again).
  function foldLongAnswer(card) {
    var body = card.querySelector(".answer-body");
    if (!body || body.dataset.folding) return;
    if (!body.getClientRects().length) return; // not shown (another answer on a phone): when it is
    body.dataset.folding = "true";
    if (body.scrollHeight <= LONG_ANSWER_PX) return;
    var id = card.dataset.answer;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "link show-more";
    button.setAttribute("aria-controls", body.id);
    function show(open) {
      body.classList.toggle("is-folded", !open);
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Show less" : "Show more";
    }
    button.addEventListener("click", function () {
      expanded[id] = body.classList.contains("is-folded");
      show(expanded[id]);
    });
    show(!!expanded[id]);
    body.insertAdjacentElement("afterend", button);
  }

  // The sticky question is clamped to a few lines when it is long; a button shows all of it.
  function clampQuestion() {
    var heading = document.getElementById("question-heading");
    if (!heading || document.getElementById("question-toggle")) return;
    heading.classList.add("is-clamped");
    if (heading.scrollHeight <= heading.clientHeight + 2) return;
    var button = document.createElement("button");
    button.type = "button";
    button.id = "question-toggle";
    button.className = "link";
    button.setAttribute("aria-controls", "question-heading");
    function show(open) {
      heading.classList.toggle("is-clamped", !open);
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Show less of the question" : "Show the whole question";
      trackHeadHeight();
    }
    button.addEventListener("click", function () { show(heading.classList.contains("is-clamped")); });
    show(false);
    heading.insertAdjacentElement("afterend", button);
  }

  function setLayout() {
    var narrow = ONE_AT_A_TIME.matches && cards().length > 1;
    form.classList.toggle("one-at-a-time", narrow);
    if (pager) pager.hidden = !narrow;
    setCurrent(currentCard(), false);
    trackHeadHeight();
  }

  function move(delta) {
    var list = cards();
    if (!list.length) return;
    var i = list.indexOf(currentCard());
    setCurrent(list[Math.min(list.length - 1, Math.max(0, i + delta))], true);
  }

  function setState(card, state, text, retry) {
    var p = card.querySelector(".save-state");
    if (!p) return;
    p.dataset.state = state;
    p.textContent = text;
    if (retry) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "link retry";
      button.textContent = "Retry now";
      button.addEventListener("click", retry);
      p.appendChild(button);
    }
  }

  function updateProgress() {
    var list = cards();
    var rated = list.filter(function (c) { return c.dataset.stars !== ""; }).length;
    var bar = document.getElementById("task-progress");
    var text = document.getElementById("task-progress-text");
    if (bar) { bar.value = rated; bar.textContent = rated + " of " + list.length; }
    if (text) text.textContent = rated + " of " + list.length;
  }

  // A card the server just sent is wired up by htmx when it settles; a key pressed before that must not
  // fall through to a plain form post (or do nothing), so make sure it is wired up first.
  function ready(elt) {
    var card = elt.closest(".answer-card");
    if (card) htmx.process(card);
  }

  function rate(card, value) {
    var input = card.querySelector('input[type=radio][value="' + value + '"]');
    if (!input) return;
    ready(card);
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function undo() {
    var card = null;
    while (undoStack.length && !card) card = cardOf(undoStack.pop());
    card = card || currentCard();
    var button = card && card.querySelector("button.undo:not([hidden])");
    if (!button) return;
    setCurrent(card, true);
    ready(button);
    button.click();
  }

  // The element that made a request: the card's star fieldset, or its undo button.
  function resend(elt) {
    if (!document.body.contains(elt)) return; // the card was replaced meanwhile (saved another way)
    ready(elt);
    if (elt.matches("fieldset")) htmx.trigger(elt, "change");
    else elt.click();
  }

  function failed(elt, message, retryable) {
    var card = elt.closest(".answer-card");
    if (!card) return;
    var id = card.dataset.answer;
    clearTimeout(timers[id]);
    if (!retryable) {
      setState(card, "failed", "Not saved: " + message);
      return;
    }
    var n = attempts[id] = (attempts[id] || 0) + 1;
    var delay = RETRY_DELAYS_MS[Math.min(n - 1, RETRY_DELAYS_MS.length - 1)];
    var retry = function () { clearTimeout(timers[id]); resend(elt); };
    timers[id] = setTimeout(retry, delay);
    setState(card, "failed", "Not saved: " + message + " Retrying in " + Math.round(delay / 1000) + " s.", retry);
  }

  cards().forEach(function (c) {
    if (c.dataset.stars === "") unratedAtLoad[c.dataset.answer] = true;
    foldLongAnswer(c);
  });
  clampQuestion();
  // Measured again once styles and fonts have settled (a slow stylesheet can make the first measure see
  // no overflow) and when the width changes; it adds the button once, when the question overflows.
  window.addEventListener("load", clampQuestion);
  window.addEventListener("resize", clampQuestion);
  setCurrent(cards()[0], false);
  setLayout();
  if (ONE_AT_A_TIME.addEventListener) ONE_AT_A_TIME.addEventListener("change", setLayout);
  window.addEventListener("resize", trackHeadHeight);

  if (pager) {
    document.getElementById("previous-answer").addEventListener("click", function () { move(-1); });
    document.getElementById("next-answer").addEventListener("click", function () { move(1); });
  }

  // Swipe left for the next answer, right for the previous one (one answer at a time only).
  var touchStart = null;
  form.addEventListener("touchstart", function (event) {
    var t = event.changedTouches[0];
    touchStart = { x: t.clientX, y: t.clientY };
  }, { passive: true });
  form.addEventListener("touchend", function (event) {
    if (!touchStart || !oneAtATime()) return;
    var t = event.changedTouches[0];
    var dx = t.clientX - touchStart.x, dy = t.clientY - touchStart.y;
    touchStart = null;
    if (Math.abs(dx) > 60 && Math.abs(dx) > 2 * Math.abs(dy)) move(dx < 0 ? 1 : -1);
  }, { passive: true });

  // "Next question" is a button of the plain form (it saves the page's choices first, for pages without
  // JavaScript). Here every choice is saved as it is made, so it is a plain link, unless a save is still
  // under way or failed: then the form goes, which saves those choices before moving on.
  var next = document.getElementById("next-question");
  if (next) next.addEventListener("click", function (event) {
    var unsaved = form.querySelector('.save-state[data-state="saving"], .save-state[data-state="failed"]');
    if (unsaved) return;
    event.preventDefault();
    window.location.href = next.dataset.href;
  });

  // The undo order is the order the rater chose stars in, not the order the server answered.
  form.addEventListener("change", function (event) {
    var card = event.target.closest(".answer-card");
    if (!card || event.target.type !== "radio") return;
    var id = card.dataset.answer;
    undoStack = undoStack.filter(function (x) { return x !== id; });
    undoStack.push(id);
    // One answer at a time: a tap on a grade moves on, as the 0–3 keys do (after a moment to see it).
    if (event.isTrusted && oneAtATime() && id === current) {
      setTimeout(function () { if (current === id) move(1); }, 350);
    }
  });

  form.addEventListener("focusin", function (event) {
    var card = event.target.closest(".answer-card");
    if (card) setCurrent(card, false);
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target.closest && target.closest("input[type=text], textarea, select, [contenteditable]")) return;
    var key = event.key;
    if (leaving) {
      // The next question is on its way: a digit is for it, not for this page's card.
      if (/^[0-3]$/.test(key)) {
        event.preventDefault();
        if (!(kept && kept.keep(key))) setNote("The key " + key + " was not used: the next question is still loading.");
      }
      return;
    }
    if (/^[0-3]$/.test(key)) {
      var card = currentCard();
      if (!card) return;
      event.preventDefault();
      rate(card, key);
      move(1);
      return;
    }
    switch (key) {
      case "j": case "ArrowDown": event.preventDefault(); move(1); break;
      case "k": case "ArrowUp": event.preventDefault(); move(-1); break;
      case "u": event.preventDefault(); undo(); break;
      case "n": event.preventDefault(); leaving = true; document.getElementById("next-question").click(); break;
      case "s": {
        event.preventDefault();
        var details = document.getElementById("skip-details");
        details.open = true;
        details.querySelector("input[name=reason]").focus();
        break;
      }
      default: break;
    }
  });

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    var card = event.detail.elt.closest(".answer-card");
    if (card) setState(card, "saving", "Saving…");
  });

  document.body.addEventListener("htmx:sendError", function (event) {
    failed(event.detail.elt, "no connection to the server.", true);
  });

  document.body.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var message = "the server answered " + xhr.status + ".";
    try { message = JSON.parse(xhr.responseText).error || message; } catch (e) { /* not JSON */ }
    failed(event.detail.elt, message, xhr.status >= 500);
  });

  // A card came back from the server (saved or undone): keep it highlighted, track undo and progress.
  document.body.addEventListener("htmx:load", function (event) {
    var card = event.detail.elt;
    if (!card.classList || !card.classList.contains("answer-card")) return;
    var id = card.dataset.answer;
    attempts[id] = 0;
    clearTimeout(timers[id]);
    var state = card.querySelector(".save-state").dataset.state;
    if (state === "undone") undoStack = undoStack.filter(function (x) { return x !== id; });
    if (state === "saved") {
      if (unratedAtLoad[id] && !counted[id]) {
        counted[id] = true;
        var count = document.getElementById("session-count");
        if (count) {
          var total = parseInt(count.textContent, 10) + 1;
          count.textContent = String(total);
          var plural = document.getElementById("session-plural");
          if (plural) plural.textContent = total === 1 ? "" : "s";
        }
      }
    }
    foldLongAnswer(card);
    if (id === current) {
      card.classList.add("is-current");
      if (document.activeElement === document.body || !document.activeElement) card.focus({ preventScroll: true });
    }
    updateProgress();
  });

  // htmx's settle puts back the class the server sent on elements that kept their id (the answer's body),
  // after htmx:load folded it: the answer just rated came back unfolded. On a phone that is the last
  // answer (it stays current): its grades and "Saved" went a screen down, its text under the pager.
  document.body.addEventListener("htmx:afterSettle", function () {
    cards().forEach(function (c) {
      var body = c.querySelector(".answer-body"), button = c.querySelector(".show-more");
      if (body && button) body.classList.toggle("is-folded", button.getAttribute("aria-expanded") !== "true");
    });
  });

  // Back to this page from the browser's cache after "n": it is not leaving any more.
  window.addEventListener("pageshow", function (event) { if (event.persisted) leaving = false; });

  function setNote(text) { if (kept) kept.say(text); }

  // Digits pressed after "n" on the previous question, or while this page loaded: rate this question's
  // answers with them now, in order, as if pressed here.
  var waiting = kept ? kept.take() : [];
  waiting.forEach(function (key) {
    var card = currentCard();
    if (!card) return;
    rate(card, key);
    move(1);
  });
  if (waiting.length) {
    setNote(kept.keyWords(waiting) + " you pressed while this question loaded " +
      (waiting.length === 1 ? "rated its first answer." : "rated its first answers, in order."));
  }

  form.dataset.ready = "true"; // keys work from now on (the browser tests wait for this)
})();

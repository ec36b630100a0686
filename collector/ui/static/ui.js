// Step through the k attempts of a ticket (buttons or the arrow keys): the verdict flips as you go.
(function () {
  "use strict";
  function setUp(stepper) {
    var attempts = Array.prototype.slice.call(document.querySelectorAll(".attempts .attempt"));
    var label = stepper.querySelector("[data-step-label]");
    if (!attempts.length) { stepper.hidden = true; return; }
    var current = 0;
    function show(index, focus) {
      current = (index + attempts.length) % attempts.length;
      attempts.forEach(function (a, i) { a.classList.toggle("current", i === current); });
      var verdict = attempts[current].querySelector("[data-testid=verdict]");
      label.textContent = "Attempt " + (current + 1) + " of " + attempts.length + ": " + (verdict ? verdict.textContent : "");
      if (focus) { attempts[current].focus(); attempts[current].scrollIntoView({ block: "nearest", inline: "nearest" }); }
    }
    stepper.addEventListener("click", function (event) {
      var step = event.target.getAttribute("data-step");
      if (step) { show(current + parseInt(step, 10), true); }
    });
    document.addEventListener("keydown", function (event) {
      var tag = (event.target.tagName || "").toLowerCase();
      if (tag === "input" || tag === "select" || tag === "textarea") { return; }
      if (event.key === "ArrowRight") { show(current + 1, true); }
      if (event.key === "ArrowLeft") { show(current - 1, true); }
    });
    show(0, false);
  }
  document.addEventListener("DOMContentLoaded", function () {
    var stepper = document.querySelector("[data-stepper]");
    if (stepper) { setUp(stepper); }
  });
})();

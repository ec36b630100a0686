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
    stepper.hidden = false;
  }
  document.addEventListener("DOMContentLoaded", function () {
    var stepper = document.querySelector("[data-stepper]");
    if (stepper) { setUp(stepper); }
  });
})();

// --- k curves (uiviews): the slider moves the marker and reads out pass@k and pass^k at k, with intervals ---
(function () {
  "use strict";
  function pct(v) { return (100 * v).toFixed(1) + "%"; }
  function ci(lo, hi) { return Math.round(100 * lo) + "–" + Math.round(100 * hi) + "%"; }
  function setUp(figure) {
    var data = JSON.parse(figure.getAttribute("data-kcurve"));
    var slider = figure.querySelector("[data-k-slider]");
    var readout = figure.querySelector("[data-k-readout]");
    var marker = figure.querySelector("[data-k-marker]");
    var dotAt = figure.querySelector("[data-k-dot=at]");
    var dotHat = figure.querySelector("[data-k-dot=hat]");
    function show() {
      var i = parseInt(slider.value, 10) - 1;
      var k = data.k[i];
      readout.textContent = "k = " + k + ": pass@" + k + " " + pct(data.pass_at_k[i]) + " (" +
        ci(data.pass_at_k_low[i], data.pass_at_k_high[i]) + "), pass^" + k + " " + pct(data.pass_hat_k[i]) + " (" +
        ci(data.pass_hat_k_low[i], data.pass_hat_k_high[i]) + "), " + data.tickets + " tickets";
      slider.setAttribute("aria-valuetext", readout.textContent);
      marker.setAttribute("x1", data.x[i]); marker.setAttribute("x2", data.x[i]);
      dotAt.setAttribute("cx", data.x[i]); dotAt.setAttribute("cy", data.y_at[i]);
      dotHat.setAttribute("cx", data.x[i]); dotHat.setAttribute("cy", data.y_hat[i]);
    }
    slider.addEventListener("input", show);
    slider.addEventListener("change", show);
    // Moved before this script ran (a slow load): the page's own readout is of the k it was rendered at.
    if (slider.value !== slider.defaultValue) { show(); }
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("[data-kcurve]"), setUp);
  });
})();

// --- filters (htmx): a choice made before htmx bound the form is not lost ---
// The filter forms update their list in place through htmx, a deferred script. A select (or a date) changed while
// the page was still loading changed no list: once the forms are bound,
// each such field's change is sent again. Without htmx at all (blocked, failed to load), a change submits the form.
(function () {
  "use strict";
  function changed(field) {
    if (field.tagName.toLowerCase() === "select") {
      return Array.prototype.some.call(field.options, function (o) { return o.selected !== o.defaultSelected; });
    }
    return field.value !== field.defaultValue;
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("form.filters[hx-get]"), function (form) {
      var fields = Array.prototype.slice.call(form.querySelectorAll("select, input[type=date]"));
      if (!window.htmx) {
        fields.forEach(function (field) { field.addEventListener("change", function () { form.submit(); }); });
        return;
      }
      var moved = fields.filter(changed);
      if (moved.length) { moved[0].dispatchEvent(new Event("change", { bubbles: true })); }
    });
  });
})();

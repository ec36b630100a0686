// passhat report page: the k control, the per-task-type column that follows it, and the traffic calculator.
// Everything it needs is in the page: the report's JSON sits in the script element with id "report-data".
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const curve = data.curve;
  const maxK = curve.k.length;

  function pct(v) {
    if (v === null || v === undefined || !Number.isFinite(v)) return "–";
    if (v > 0 && v < 0.001) return (100 * v).toPrecision(2) + "%";
    return (100 * v).toFixed(1) + "%";
  }
  function count(v) {
    return v >= 10 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1);
  }
  // An interval as the page prints it: "[low, high] ±h", in percent (h its half-width in points).
  function interval(band, i) {
    if (!band || i >= band.length) return "";
    const low = band[i][0], high = band[i][1];
    return "[" + (100 * low).toFixed(1) + ", " + (100 * high).toFixed(1) + "] ±" + (50 * (high - low)).toFixed(0);
  }
  function setText(id, text) {
    const el = document.getElementById(id);
    if (el) el.textContent = text;
  }

  function moveMarker(k, values) {
    const svg = document.getElementById("curve-chart");
    if (!svg) return;
    const left = Number(svg.dataset.left), top = Number(svg.dataset.top);
    const w = Number(svg.dataset.plotWidth), h = Number(svg.dataset.plotHeight);
    const x0 = Number(svg.dataset.xMin), x1 = Number(svg.dataset.xMax);
    const x = left + ((k - x0) / ((x1 - x0) || 1)) * w;
    const marker = svg.querySelector(".marker");
    marker.setAttribute("x1", x.toFixed(1));
    marker.setAttribute("x2", x.toFixed(1));
    svg.querySelectorAll(".marker-dot").forEach(function (dot, i) {
      dot.setAttribute("cx", x.toFixed(1));
      dot.setAttribute("cy", (top + (1 - values[i]) * h).toFixed(1));
    });
  }

  function onK() {
    const k = Number(document.getElementById("k-range").value);
    const i = k - 1;
    const at = curve.pass_at_k[i], hat = curve.pass_hat_k[i];
    setText("k-value", String(k));
    setText("curve-at", pct(at));
    setText("curve-hat", pct(hat));
    setText("curve-at-ci", interval(curve.pass_at_k_band, i));
    setText("curve-hat-ci", interval(curve.pass_hat_k_band, i));
    // pass@k >= pass^k always; clamp so rounding never prints "-0.0".
    setText("curve-gap", (100 * Math.max(0, at - hat)).toFixed(1) + " pts");
    setText(
      "curve-note",
      curve.extrapolated[i]
        ? "beyond the trials run: extrapolated from the fitted mixture, over"
        : "measured: unbiased estimate from the trials of"
    );
    document.querySelectorAll(".k-now").forEach(function (el) { el.textContent = String(k); });
    document.querySelectorAll("td.hat-at-k").forEach(function (td) {
      const row = data.task_type_curves[Number(td.dataset.row)];
      // Task types with too few tickets are not extrapolated: their curve stops at the trials run.
      td.textContent = i < row.pass_hat_k.length ? pct(row.pass_hat_k[i]) + (row.extrapolated[i] ? "*" : "") : "–";
      const band = interval(row.pass_hat_k_band, i);
      if (band) {
        const span = document.createElement("span");
        span.className = "ci";
        span.textContent = band;
        td.appendChild(span);
      }
    });
    moveMarker(k, [at, hat]);
    const calcK = document.getElementById("calc-k");
    if (calcK) { calcK.value = String(k); onCalc(); }
  }

  function readNumber(id, low, high, label) {
    const raw = document.getElementById(id).value;
    const v = Number(raw);
    if (raw === "" || !Number.isFinite(v) || v < low || (high !== null && v > high)) {
      throw new Error(label + (high === null ? " must be " + low + " or more" : " must lie between " + low + " and " + high));
    }
    return v;
  }

  function onCalc() {
    let rate, tickets, noticed, k;
    try {
      rate = readNumber("calc-rate", 0, 100, "success rate (%)") / 100;
      tickets = readNumber("calc-tickets", 0, null, "tickets per day");
      noticed = readNumber("calc-noticed", 0, 100, "share noticed (%)") / 100;
      k = Math.round(readNumber("calc-k", 1, 1000, "k"));
    } catch (err) {
      setText("calc-error", err.message);
      ["calc-failed", "calc-noticed-out", "calc-at", "calc-hat", "calc-measured"].forEach(function (id) { setText(id, "–"); });
      return;
    }
    setText("calc-error", "");
    const failed = tickets * (1 - rate);
    setText("calc-failed", count(failed));
    setText("calc-noticed-out", count(failed * noticed));
    setText("calc-at", pct(1 - Math.pow(1 - rate, k)));
    setText("calc-hat", pct(Math.pow(rate, k)));
    setText("calc-measured", k <= maxK ? (pct(curve.pass_hat_k[k - 1]) + " " + interval(curve.pass_hat_k_band, k - 1)).trim() : "–");
    document.querySelectorAll(".calc-k-now").forEach(function (el) { el.textContent = String(k); });
  }

  // The attempts strip: previous/next buttons, arrow keys on the focused strip, and where the reader is.
  function attemptsStrip() {
    const strip = document.getElementById("attempts-strip");
    if (!strip) return;
    const cards = strip.querySelectorAll(".attempt");
    const prev = document.getElementById("attempts-prev"), next = document.getElementById("attempts-next");
    if (!cards.length) return;
    function pitch() {  // one card and the gap after it (fractional pixels: cards are a quarter of the strip)
      const one = cards[0].getBoundingClientRect();
      return cards.length > 1 ? cards[1].getBoundingClientRect().left - one.left : one.width;
    }
    function first() { return Math.min(cards.length - 1, Math.max(0, Math.round(strip.scrollLeft / pitch()))); }
    function shown() {
      const gap = pitch() - cards[0].getBoundingClientRect().width;
      return Math.max(1, Math.floor((strip.clientWidth + gap + 2) / pitch()));
    }
    function update() {
      const from = first(), to = Math.min(cards.length, from + shown());
      setText("attempts-position", to - from > 1
        ? "cards " + (from + 1) + "–" + to + " of " + cards.length
        : "card " + (from + 1) + " of " + cards.length);
      prev.disabled = from <= 0;
      next.disabled = to >= cards.length;
    }
    function go(index) {
      const target = Math.max(0, Math.min(cards.length - shown(), index));
      strip.scrollLeft = target * pitch();
      update();
    }
    prev.hidden = false;
    next.hidden = false;
    prev.addEventListener("click", function () { go(first() - shown()); });
    next.addEventListener("click", function () { go(first() + shown()); });
    strip.addEventListener("keydown", function (event) {
      const moves = { ArrowRight: first() + 1, ArrowLeft: first() - 1, Home: 0, End: cards.length, PageDown: first() + shown(), PageUp: first() - shown() };
      if (!(event.key in moves)) return;
      event.preventDefault();
      go(moves[event.key]);
    });
    strip.addEventListener("scroll", update);
    window.addEventListener("resize", update);
    update();
  }

  document.getElementById("k-range").addEventListener("input", onK);
  ["calc-rate", "calc-tickets", "calc-noticed", "calc-k"].forEach(function (id) {
    document.getElementById(id).addEventListener("input", onCalc);
  });
  onK();
  onCalc();
  attemptsStrip();
})();

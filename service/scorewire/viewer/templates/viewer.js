// The viewer's only script: sortable tables, and the run page's case filter (in the
// page for the offline report; served pages ask the server, which may hold more cases).
(function () {
  "use strict";
  var served = document.body.getAttribute("data-served") === "true";

  function cellValue(row, index, type) {
    var cell = row.children[index];
    var raw = cell ? (cell.getAttribute("data-value") !== null ? cell.getAttribute("data-value") : cell.textContent) : "";
    if (type === "number") { var n = parseFloat(raw); return isNaN(n) ? -Infinity : n; }
    return raw.toLowerCase();
  }

  function sortBy(table, th) {
    var headers = Array.prototype.slice.call(th.parentNode.children);
    var index = headers.indexOf(th);
    var type = th.getAttribute("data-type") || "text";
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index, type), y = cellValue(b, index, type);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th) {
      th.addEventListener("click", function () { sortBy(table, th); });
    });
  });

  // The filter: the same rule as scorewire.viewer.render.matches.
  function matches(row, check, outcome) {
    var scores = JSON.parse(row.getAttribute("data-scores") || "[]");
    var want = function (o) {
      if (outcome === "all") return true;
      if (outcome === "failing") return o === "failed" || o === "errored";
      return o === outcome;
    };
    if (!check) return want(row.getAttribute("data-outcome"));
    return scores.some(function (s) { return s[0] === check && want(s[1]); });
  }

  var form = document.getElementById("filters");
  if (!form) return;
  var check = document.getElementById("filter-check");
  var outcome = document.getElementById("filter-outcome");
  var rows = document.querySelectorAll("#case-table tbody tr");
  var count = document.getElementById("case-count");
  var none = document.getElementById("no-cases");

  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var ok = served || matches(row, check.value, outcome.value);
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    count.textContent = shown + (shown === 1 ? " case" : " cases");
    none.hidden = shown > 0;
  }

  function changed() {
    if (served) { form.submit(); return; }
    apply();
  }
  check.addEventListener("change", changed);
  outcome.addEventListener("change", changed);
  apply();
})();

// The viewer's only script: sortable tables, the run page's case filter (in the page for
// the offline report; served pages ask the server, which may hold more cases), the text
// search (in the page, as one types), and the compare page's filter and word diffs.
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

  // ---- the cases table: drawn from the JSON block with textContent only ----------------

  var FOLD_CHARS = 400, FOLD_LINES = 8, PAGE = 200, CONTEXT = 40;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function badge(outcome) { return el("span", "badge " + outcome, outcome); }

  // The same folding rule as the templates' `value` macro.
  function value(text, empty) {
    if (text === null || text === undefined || text === "") return el("span", "none", empty || "\u2013");
    var lines = text.split("\n").length - 1;
    if (text.length <= FOLD_CHARS && lines < FOLD_LINES) return el("pre", null, text);
    var details = el("details", "fold");
    var summary = el("summary", null, text.slice(0, 160) + "\u2026 ");
    summary.appendChild(el("span", "size", "(" + text.length + " characters)"));
    details.appendChild(summary);
    details.appendChild(el("pre", null, text));
    return details;
  }

  function reason(error, text) {
    var div = el("div", "reason");
    if (error) {
      div.appendChild(el("code", null, error[0]));
      div.appendChild(document.createTextNode(" " + error[1]));
    } else {
      div.textContent = text;
    }
    return div;
  }

  function scoresList(scores) {
    var ul = el("ul", "scores");
    var passed = [], skipped = [];
    scores.forEach(function (s) {
      var name = s[0], type = s[1], val = s[2], outcome = s[3];
      // s[7]: a judge's score (or a sampled one), whose reason is its reasoning.
      if (outcome === "passed" && !(s[7] && s[4])) { passed.push(name); return; }
      if (outcome === "skipped") { skipped.push(name); return; }
      if (outcome === "passed") {
        // A passing judge's reasoning: folded, one click away.
        var fold = el("li", "passed reasoned");
        fold.setAttribute("data-score", name);
        var det = el("details", "reasoning");
        var sum = el("summary");
        sum.appendChild(badge(outcome));
        sum.appendChild(document.createTextNode(" "));
        sum.appendChild(el("strong", null, name));
        sum.appendChild(el("span", "sub", " " + type + (val === null ? "" : " \u00b7 " + val.toFixed(3))));
        det.appendChild(sum);
        if (s[6]) det.appendChild(el("div", "sub spread", s[6]));
        if (s[8]) det.appendChild(el("div", "sub judged-by", s[8]));
        det.appendChild(reason(null, s[4]));
        fold.appendChild(det);
        ul.appendChild(fold);
        return;
      }
      var li = el("li", outcome);
      li.setAttribute("data-score", name);
      var head = el("div");
      head.appendChild(badge(outcome));
      head.appendChild(document.createTextNode(" "));
      head.appendChild(el("strong", null, name));
      head.appendChild(el("span", "sub", " " + type + (val === null ? "" : " \u00b7 " + val.toFixed(3))));
      li.appendChild(head);
      if (s[6]) li.appendChild(el("div", "sub spread", s[6]));
      if (s[8]) li.appendChild(el("div", "sub judged-by", s[8]));
      li.appendChild(reason(s[5], s[4]));
      ul.appendChild(li);
    });
    [["passed", passed], ["skipped", skipped]].forEach(function (group) {
      if (!group[1].length) return;
      var li = el("li", "passed-list");
      li.appendChild(badge(group[0]));
      li.appendChild(document.createTextNode(" " + group[1].join(", ")));
      ul.appendChild(li);
    });
    return ul;
  }

  // Human review (served: signed in, or the one local user of `scorewire view`): a
  // pass/fail and note per case, posted with the page's CSRF token and written as a label
  // by the server; the reviews already given are shown above the form.
  var review = document.body.getAttribute("data-review") === "true";
  var reviewCsrf = document.body.getAttribute("data-csrf") || "";

  function hiddenInput(name, value) {
    var input = el("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    return input;
  }

  // Labels already on a case's output (the served run page), by case index.
  var reviewData = document.getElementById("review-data");
  var reviewed = reviewData ? JSON.parse(reviewData.textContent) : {};

  function reviewList(given) {
    var ul = el("ul", "reviews");
    given.forEach(function (r) {
      var li = el("li", "review " + (r[1] ? "passed" : "failed"));
      li.appendChild(el("span", "badge " + (r[1] ? "passed" : "failed"), r[1] ? "pass" : "fail"));
      li.appendChild(document.createTextNode(" " + r[0] + (r[2] ? ": " + r[2] : "")));
      ul.appendChild(li);
    });
    return ul;
  }

  function reviewForm(c) {
    var form = el("form", "review");
    form.method = "post";
    form.action = "/review";
    form.appendChild(hiddenInput("csrf", reviewCsrf));
    form.appendChild(hiddenInput("run", document.querySelector("section.run").getAttribute("data-run")));
    form.appendChild(hiddenInput("case", String(c.index)));
    form.appendChild(hiddenInput("next", location.pathname + location.search));
    var note = el("input");
    note.name = "note";
    note.placeholder = "note";
    note.setAttribute("aria-label", "review note");
    note.maxLength = 4096;
    form.appendChild(note);
    [["true", "pass"], ["false", "fail"]].forEach(function (b) {
      var button = el("button", "verdict " + b[1], b[1]);
      button.type = "submit";
      button.name = "passed";
      button.value = b[0];
      form.appendChild(button);
    });
    return form;
  }

  function caseRow(c) {
    var tr = el("tr", "case " + c.outcome);
    tr.setAttribute("data-outcome", c.outcome);
    var id = el("td", "id");
    id.appendChild(el("div")).appendChild(badge(c.outcome));
    id.appendChild(el("div", "sid", c.id));
    if (c.description) id.appendChild(el("div", "sub", c.description));
    if (c.provider) id.appendChild(el("div", "sub", c.provider));
    var costs = [c.cost, c.latency].filter(function (x) { return x; });
    if (costs.length) id.appendChild(el("div", "sub cost", costs.join(" \u00b7 ")));
    var input = el("td");
    input.appendChild(value(c.input));
    if (c.prompt) {
      var prompt = el("details", "prompt");
      prompt.appendChild(el("summary", null, "prompt"));
      prompt.appendChild(el("pre", null, c.prompt));
      input.appendChild(prompt);
    }
    var expected = el("td");
    expected.appendChild(value(c.expected));
    var output = el("td");
    if (c.generation_error) {
      var gen = reason(c.generation_error, "");
      gen.className = "reason errored";
      output.appendChild(gen);
    }
    output.appendChild(value(c.output, "no output"));
    var scores = el("td");
    scores.appendChild(scoresList(c.scores));
    var given = reviewed[String(c.index)];
    if (given) scores.appendChild(reviewList(given));
    if (review && c.output !== null) scores.appendChild(reviewForm(c));
    [id, input, expected, output, scores].forEach(function (td) { tr.appendChild(td); });
    return tr;
  }

  // What the text search looks in: the same fields as scorewire.viewer.render.search_text.
  function searchText(c) {
    if (c._text === undefined) {
      var parts = [c.input || "", c.expected || "", c.output || ""];
      if (c.generation_error) parts.push(c.generation_error[1]);
      c.scores.forEach(function (s) { parts.push(s[4] || ""); if (s[5]) parts.push(s[5][1]); });
      c._text = parts.join("\n").toLowerCase();
    }
    return c._text;
  }

  function found(c, query) { return !query || searchText(c).indexOf(query.toLowerCase()) !== -1; }

  // The filter: the same rule as scorewire.viewer.render.matches.
  function matches(c, check, outcome) {
    var want = function (o) {
      if (outcome === "all") return true;
      if (outcome === "failing") return o === "failed" || o === "errored";
      return o === outcome;
    };
    if (!check) return want(c.outcome);
    return c.scores.some(function (s) { return s[0] === check && want(s[3]); });
  }

  // Rows drawn PAGE at a time: `button` draws the next ones.
  function pager(items, body, button, draw) {
    var drawn = 0;
    function more() {
      var end = Math.min(items.length, drawn + PAGE);
      var rows = document.createDocumentFragment();
      for (; drawn < end; drawn++) rows.appendChild(draw(items[drawn]));
      body.appendChild(rows);
      var left = items.length - drawn;
      button.hidden = left === 0;
      button.textContent = "show " + Math.min(left, PAGE) + " more of " + left;
    }
    body.textContent = "";
    button.onclick = more;
    more();
  }

  // The server's word diff (scorewire.viewer.diffs), drawn as text: <del> what only the
  // base output had, <ins> what only the compared one has.
  function diffView(ops) {
    var details = el("details", "diff");
    details.open = true;
    details.appendChild(el("summary", null, "what changed"));
    var pre = el("pre", "diff");
    ops.forEach(function (op, i) {
      var text = op[1];
      if (op[0] !== "=") { pre.appendChild(el(op[0] === "-" ? "del" : "ins", null, text)); return; }
      // Long unchanged text keeps CONTEXT characters beside each change (the whole
      // outputs are in the columns beside it).
      var head = i > 0 ? text.slice(0, CONTEXT) : "", tail = i < ops.length - 1 ? text.slice(-CONTEXT) : "";
      if (text.length <= 2 * CONTEXT + 20) { pre.appendChild(document.createTextNode(text)); return; }
      pre.appendChild(document.createTextNode(head));
      pre.appendChild(el("span", "skip", "\u2026 " + (text.length - head.length - tail.length) + " unchanged characters \u2026"));
      pre.appendChild(document.createTextNode(tail));
    });
    details.appendChild(pre);
    return details;
  }

  function changeRow(ch) {
    var tr = el("tr", "change " + ch.kind);
    tr.setAttribute("data-kind", ch.kind);
    tr.setAttribute("data-key", ch.key);
    var id = el("td", "id");
    id.appendChild(el("span", "badge " + ch.kind, ch.kind));
    id.appendChild(el("div", "sid", ch.key));
    id.appendChild(el("div", "sub", (ch.was || "\u2014") + " \u2192 " + (ch.now || "\u2014")));
    if (ch.description) id.appendChild(el("div", "sub", ch.description));
    var before = el("td");
    before.appendChild(ch.base ? value(ch.base.output, "no output") : el("span", "none", "not in base"));
    var after = el("td");
    after.appendChild(ch.case ? value(ch.case.output, "no output") : el("span", "none", "not in this run"));
    if (ch.diff) after.appendChild(diffView(ch.diff));
    var why = el("td");
    if (ch.case) why.appendChild(scoresList(ch.case.scores));
    [id, before, after, why].forEach(function (td) { tr.appendChild(td); });
    return tr;
  }

  // The compare page's filter: every change, those failing now, or those whose output
  // changed; and the text search over the compared run's case.
  function changeMatches(ch, kind, query) {
    var now = ch.case;
    if (kind === "failing" && !(ch.now === "failed" || ch.now === "errored")) return false;
    if (kind === "output" && !(ch.base && now && ch.base.output !== now.output)) return false;
    if (!query) return true;
    var q = query.toLowerCase();
    return (now ? found(now, q) : false) || (ch.base && (ch.base.output || "").toLowerCase().indexOf(q) !== -1) ||
      ch.key.toLowerCase().indexOf(q) !== -1;
  }

  var changeData = document.getElementById("change-data");
  if (changeData) {
    var changes = JSON.parse(changeData.textContent);
    var kindSelect = document.getElementById("change-kind");
    var changeQuery = document.getElementById("change-q");
    var drawChanges = function () {
      var kind = kindSelect ? kindSelect.value : "all", q = changeQuery ? changeQuery.value : "";
      var shown = changes.filter(function (ch) { return changeMatches(ch, kind, q); });
      pager(shown, document.querySelector("#change-table tbody"), document.getElementById("more-changes"), changeRow);
      var counter = document.getElementById("change-count");
      if (counter) counter.textContent = shown.length + " of " + changes.length + (changes.length === 1 ? " change" : " changes");
      var empty = document.getElementById("no-changes");
      if (empty) empty.hidden = shown.length > 0 || changes.length === 0;
    };
    if (kindSelect) kindSelect.addEventListener("change", drawChanges);
    if (changeQuery) changeQuery.addEventListener("input", drawChanges);
    drawChanges();
  }

  var form = document.getElementById("filters");
  var data = document.getElementById("case-data");
  if (!form || !data) return;
  var cases = JSON.parse(data.textContent);
  var check = document.getElementById("filter-check");
  var outcome = document.getElementById("filter-outcome");
  var body = document.querySelector("#case-table tbody");
  var count = document.getElementById("case-count");
  var none = document.getElementById("no-cases");
  var more = document.getElementById("more-cases");

  var query = document.getElementById("filter-q");
  var exports = ["export-csv", "export-json"].map(function (i) { return document.getElementById(i); })
    .filter(function (a) { return a; });

  function apply() {
    // Served pages hold the cases the server's filter chose; the offline report holds all.
    // Both search the text in the page as one types (the server searched it too).
    var q = query.value.trim();
    var chosen = cases.filter(function (c) {
      return (served || matches(c, check.value, outcome.value)) && found(c, q);
    });
    // The downloads carry the search typed so far, as the server would have been asked.
    exports.forEach(function (a) {
      var url = new URL(a.href, document.baseURI);
      if (q) url.searchParams.set("q", q); else url.searchParams.delete("q");
      a.href = url.pathname + url.search;
    });
    pager(chosen, body, more, caseRow);
    count.textContent = chosen.length + (chosen.length === 1 ? " case" : " cases");
    none.hidden = chosen.length > 0;
  }

  function changed() {
    if (served) { form.submit(); return; }
    apply();
  }
  check.addEventListener("change", changed);
  outcome.addEventListener("change", changed);
  query.addEventListener("input", apply);
  apply();
})();

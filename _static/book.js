// The landing page's install line names the package's wheel by its path in the site
// (_static/wheels/..., _ext/book_fixes.py), and pip needs an absolute URL: complete it
// from the page's own address, so that the line works wherever the book is served from.
(function () {
  var WHEEL = /^(_static\/wheels\/[^"\s]+\.whl)("?)$/;
  document.addEventListener("DOMContentLoaded", function () {
    var root = new URL(document.documentElement.dataset.content_root || "./", location.href);
    document.querySelectorAll("code span.pre").forEach(function (word) {
      var match = WHEEL.exec(word.textContent);
      if (match) word.textContent = new URL(match[1], root).href + match[2];
    });
  });
})();

// A chapter's evidence is one fold (_ext/evidence_layer.py). A link to its heading, or to an
// anchor inside it, opens it: Chromium opens the <details> around a link's target by itself,
// but not for the heading above the fold, and not every browser does.
(function () {
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return;
    var section = target.closest("section");
    var folds = [section && section.querySelector(":scope > details.evidence")];
    for (var d = target.closest("details"); d; d = d.parentElement.closest("details")) {
      folds.push(d);
    }
    var opened = false;
    folds.forEach(function (fold) {
      if (fold && !fold.open) { fold.open = true; opened = true; }
    });
    if (opened) target.scrollIntoView();
  }
  document.addEventListener("DOMContentLoaded", reveal);
  window.addEventListener("hashchange", reveal);
})();

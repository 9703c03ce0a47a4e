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

// On a phone a wide figure scrolls inside its frame (book.css): mark the frames whose
// figure continues to the right, so that they fade out at that edge (the cue that there
// is more), and unmark them when scrolled to the end or when the figure fits.
(function () {
  function update(frame) {
    var more = frame.scrollWidth - frame.clientWidth - frame.scrollLeft > 1;
    frame.classList.toggle("scrolls-sideways", more);
  }
  function updateAll() {
    document.querySelectorAll("figure > a.figure-full-size").forEach(update);
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("figure > a.figure-full-size").forEach(function (frame) {
      frame.addEventListener("scroll", function () { update(frame); }, {passive: true});
      var img = frame.querySelector("img");
      if (img && !img.complete) img.addEventListener("load", function () { update(frame); });
    });
    updateAll();
  });
  window.addEventListener("load", updateAll);
  window.addEventListener("resize", updateAll);
})();

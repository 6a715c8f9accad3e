// Marks the page once MathJax has typeset it (data-math="done"), or at once when the page has no
// math (data-math="none"): the browser test waits for this, and a reader never sees it.
(function () {
  function mark(value) { document.documentElement.setAttribute("data-math", value); }
  function wait(tries) {
    if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
      window.MathJax.startup.promise.then(function () { mark("done"); }, function () { mark("failed"); });
    } else if (tries > 0) {
      setTimeout(function () { wait(tries - 1); }, 50);
    } else {
      mark("no-engine");
    }
  }
  window.addEventListener("load", function () {
    var hasMath = Array.prototype.some.call(document.scripts, function (s) { return /mathjax/i.test(s.src); });
    if (!hasMath) { mark("none"); return; }
    wait(200);
  });
})();

// Marks the page once MathJax has typeset it (data-math="done"), or at once when the page has no
// math (data-math="none"): the browser test waits for this, and a reader never sees it.
// Before marking it: (1) a code label (a check key, a reading) may wrap only after , = ; | [ —
// never inside a word; (2) typeset math wider than its box is set smaller until it fits (a
// formula is read whole, not behind a scrollbar), down to 60 % (CSS zoom: the layout shrinks with
// it); wider still, it scrolls. A long statement is already broken into lines by the extension.
(function () {
  function mark(value) { document.documentElement.setAttribute("data-math", value); }
  var LABELS = "div.body td code, div.body th code, div.body h3 code, div.body div.bottom-line code, div.body div.reading-legend code";
  function breakLabels() {
    Array.prototype.forEach.call(document.querySelectorAll(LABELS), function (code) {
      var walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), nodes = [], node;
      while ((node = walker.nextNode())) nodes.push(node);
      nodes.forEach(function (t) {
        var parts = t.data.split(/(?<=[,=;|\[])/);
        if (parts.length < 2) return;
        var frag = document.createDocumentFragment();
        parts.forEach(function (p, k) {
          if (k) frag.appendChild(document.createElement("wbr"));
          frag.appendChild(document.createTextNode(p));
        });
        t.parentNode.replaceChild(frag, t);
      });
    });
  }
  function room(el) {  // the width the formula may take: its block's content box
    var box = el.parentElement;
    while (box && (getComputedStyle(box).display.indexOf("inline") === 0 || box.tagName.toLowerCase() === "mjx-container"))
      box = box.parentElement;
    if (!box) return Infinity;
    var cs = getComputedStyle(box);
    return box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  }
  function fitMath() {
    Array.prototype.forEach.call(document.querySelectorAll("div.body mjx-container"), function (m) {
      var target = m.getAttribute("display") === "true" ? m.querySelector("mjx-math") || m : m;
      target.style.zoom = "";
      var need = target.getBoundingClientRect().width, have = room(target);
      if (!(need > have + 1 && have > 0)) return;
      var zoom = Math.max(0.6, Math.floor(98 * have / need) / 100);
      target.style.zoom = zoom;
      // what else the box holds (an aligned block's padding, the screen-reader copy) may still
      // overflow it: a little smaller until it does not
      while (zoom > 0.6 && (m.scrollWidth > m.clientWidth + 1 || target.getBoundingClientRect().width > have + 1)) {
        zoom = Math.max(0.6, zoom - 0.03);
        target.style.zoom = zoom;
      }
    });
  }
  function wait(tries) {
    if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
      window.MathJax.startup.promise.then(function () { fitMath(); mark("done"); }, function () { mark("failed"); });
    } else if (tries > 0) {
      setTimeout(function () { wait(tries - 1); }, 50);
    } else {
      mark("no-engine");
    }
  }
  window.addEventListener("load", function () {
    breakLabels();
    var hasMath = Array.prototype.some.call(document.scripts, function (s) { return /mathjax/i.test(s.src); });
    if (!hasMath) { mark("none"); return; }
    wait(200);
  });
  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(fitMath, 150);
  });
})();

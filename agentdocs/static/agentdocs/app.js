// agentdocs: small page behaviours. Everything works without this file; it only adds
// keyboard saving, a guard against leaving unsaved text, confirmations and copying.
(function () {
  "use strict";

  // Ctrl+S / Cmd+S submits the form marked data-save-shortcut.
  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "s") {
      var form = document.querySelector("form[data-save-shortcut]");
      if (!form) return;
      event.preventDefault();
      if (typeof form.requestSubmit === "function") form.requestSubmit();
      else form.submit();
    }
  });

  // Warn before leaving a page whose editor holds text that was not saved.
  var dirtyForms = new Set();
  document.addEventListener("input", function (event) {
    var form = event.target.closest && event.target.closest("form[data-guard-unsaved]");
    if (form) dirtyForms.add(form);
  });
  document.addEventListener("submit", function (event) {
    dirtyForms.delete(event.target);
  });
  window.addEventListener("beforeunload", function (event) {
    if (dirtyForms.size > 0) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
  // A conflict page starts dirty: the text on it is the user's, not yet saved.
  document.querySelectorAll("form[data-guard-unsaved][data-starts-dirty]").forEach(function (form) {
    dirtyForms.add(form);
  });

  // Buttons with data-confirm ask first.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-confirm]");
    if (button && !window.confirm(button.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });

  // Copy buttons: data-copy-target names the element whose text is copied.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy-target]");
    if (!button || !navigator.clipboard) return;
    var source = document.getElementById(button.getAttribute("data-copy-target"));
    if (!source) return;
    navigator.clipboard.writeText(source.textContent).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  });

  // Search (issue 15): `/` anywhere but in a field focuses the header's search box.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var box = document.querySelector("input[data-search-shortcut]");
    if (!box) return;
    event.preventDefault();
    box.focus();
    box.select();
  });

  // The diff picker on the history page: the two radio columns pick "from" and "to".
  var picker = document.querySelector("form[data-diff-picker]");
  if (picker) {
    picker.addEventListener("change", function () {
      var from = picker.querySelector("input[name=from]:checked");
      var to = picker.querySelector("input[name=to]:checked");
      var button = picker.querySelector("button[type=submit]");
      if (button) button.disabled = !(from && to && from.value !== to.value);
    });
  }
})();

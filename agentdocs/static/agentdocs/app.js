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

  // <time datetime="..." data-local-time>: the server writes UTC; show the reader's
  // own clock (and the date when it is not today), keeping UTC in the tooltip.
  function showLocalTimes(root) {
    root.querySelectorAll("time[data-local-time]").forEach(function (element) {
      var when = new Date(element.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      var options = { hour: "2-digit", minute: "2-digit" };
      if (when.toDateString() !== new Date().toDateString()) {
        options.day = "numeric";
        options.month = "short";
      }
      if (!element.title) element.title = element.textContent.trim();
      element.textContent = when.toLocaleString([], options);
    });
  }

  // Under 640px wide, tables stack each row as a card (app.css): each cell is labelled
  // with its column's heading, read from the table's own header row.
  function labelTableCells(root) {
    root.querySelectorAll("table.table").forEach(function (table) {
      var headings = table.querySelectorAll("thead th");
      if (!headings.length) return;
      var labels = Array.prototype.map.call(headings, function (th) {
        return th.textContent.trim();
      });
      table.querySelectorAll("tbody tr").forEach(function (row) {
        var column = 0;
        Array.prototype.forEach.call(row.children, function (cell) {
          if (!cell.hasAttribute("data-label") && labels[column]) {
            cell.setAttribute("data-label", labels[column]);
          }
          column += cell.colSpan || 1;
        });
      });
    });
  }

  // The recipe form: "Add a profile" copies the empty row at the end under the next
  // number (without this file, one empty row is always there to fill in).
  document.querySelectorAll("form[data-recipe-editor]").forEach(function (form) {
    var rows = form.querySelector("[data-profile-rows]");
    var button = form.querySelector("[data-add-profile]");
    if (!rows || !button) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var all = rows.querySelectorAll("[data-profile-row]");
      var last = all[all.length - 1];
      var next = 0;
      rows.querySelectorAll("input[name^='profile-']").forEach(function (input) {
        var number = parseInt(input.name.split("-")[1], 10);
        if (number >= next) next = number + 1;
      });
      var copy = last.cloneNode(true);
      copy.querySelectorAll("[name], [id], [for]").forEach(function (element) {
        ["name", "id", "for"].forEach(function (attribute) {
          var value = element.getAttribute(attribute);
          if (value) element.setAttribute(attribute, value.replace(/profile-\d+-/, "profile-" + next + "-"));
        });
        if (element.type === "text") element.value = "";
        if (element.type === "checkbox") element.checked = false;
      });
      rows.appendChild(copy);
      var name = copy.querySelector("input[type=text]");
      if (name) name.focus();
    });
  });

  showLocalTimes(document);
  labelTableCells(document);
  document.addEventListener("htmx:afterSwap", function (event) {
    showLocalTimes(event.target);
    labelTableCells(event.target);
  });
})();

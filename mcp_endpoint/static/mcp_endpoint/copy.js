// Copy buttons: <button data-copy="ID"> copies the text of the element ID (a field's value,
// or a block's text). The buttons are hidden until this script shows them, so a page
// without scripts offers no button that does nothing.
(function () {
  "use strict";

  function textOf(element) {
    return "value" in element && typeof element.value === "string"
      ? element.value
      : element.textContent;
  }

  function selectContents(element) {
    if (typeof element.select === "function") {
      element.select();
      return;
    }
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  async function copy(button) {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    const text = textOf(source);
    let done = false;
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        done = true;
      } catch (error) {
        done = false;
      }
    }
    if (!done) {
      // Plain http on a host that is not loopback has no clipboard API.
      selectContents(source);
      done = document.execCommand("copy");
    }
    const status = document.getElementById("copy-status");
    const label = button.dataset.copied || "Copied";
    if (done) {
      button.classList.add("copied");
      button.firstChild.textContent = label;
      if (status) status.textContent = label;
    } else {
      selectContents(source);
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.hidden = false;
      button.addEventListener("click", function () {
        copy(button);
      });
    });
  });
})();

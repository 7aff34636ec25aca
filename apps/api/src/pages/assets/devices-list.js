// The team's devices list: the page works without this script; it asks before deleting the
// checked devices, and fetches the page again every 5 s to put its new rows in (states, last
// seen), unless the reader has started choosing devices.
/* global document, window, DOMParser */
"use strict";

const form = document.getElementById("bulk-form");
if (form) {
  form.addEventListener("submit", (event) => {
    if (event.submitter?.value !== "delete") return;
    if (!window.confirm(form.dataset.confirmDelete)) {
      event.preventDefault();
      return;
    }
    const confirmed = form.elements.namedItem("confirmed");
    if (confirmed) confirmed.value = "yes";
  });
}

const localTimes = (root) => {
  for (const time of root.querySelectorAll("time[datetime]")) {
    const date = new Date(time.dateTime);
    if (!Number.isNaN(date.getTime())) {
      time.title = time.textContent;
      time.textContent = date.toLocaleString(undefined, {
        dateStyle: "medium",
        timeStyle: "short",
      });
    }
  }
};

const table = document.querySelector("table[data-refresh]");
if (table) {
  const choosing = () =>
    [...document.querySelectorAll("main input[type=checkbox], main select")].some((field) =>
      field.type === "checkbox"
        ? field.checked
        : field.form === form && field.value !== "" && field.value !== field.dataset.initial,
    ) ||
    (form !== null && form.contains(document.activeElement));
  const refresh = async () => {
    try {
      if (!choosing() && !document.hidden) {
        const reply = await window.fetch(table.dataset.refresh, {
          credentials: "same-origin",
          headers: { accept: "text/html" },
        });
        if (reply.ok) {
          const fresh = new DOMParser()
            .parseFromString(await reply.text(), "text/html")
            .querySelector("table[data-refresh] tbody");
          const tbody = table.querySelector("tbody");
          if (fresh && tbody && !choosing()) {
            localTimes(fresh);
            tbody.replaceWith(document.adoptNode(fresh));
          }
        }
      }
    } catch {
      // Not reachable this time: ask again.
    }
    window.setTimeout(refresh, 5000);
  };
  window.setTimeout(refresh, 5000);
}

// Flowplane's pages work without this script; it adds the confirmation before a revoke or a
// removal, the copy button, times in the reader's own time zone, and a team's page shown again
// once its instances' actions are done.
/* global document, navigator, window */
"use strict";

// Revoke, remove: ask here; without this script the server asks on a page of its own.
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!window.confirm(form.dataset.confirm)) {
      event.preventDefault();
      return;
    }
    const confirmed = form.elements.namedItem("confirmed");
    if (confirmed) confirmed.value = "yes";
  });
}

// Copy the new token's value (the Clipboard API needs HTTPS or localhost; else select it).
for (const button of document.querySelectorAll("button[data-copy]")) {
  const source = document.getElementById(button.dataset.copy);
  const status = document.getElementById(button.dataset.copyStatus);
  if (!source) continue;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.value);
      if (status) status.textContent = "Copied to the clipboard.";
    } catch {
      source.focus();
      source.select();
      if (status) status.textContent = "Selected: press Ctrl+C (⌘C on a Mac) to copy.";
    }
  });
}

// Times: the server writes UTC; show them in the reader's time zone and language.
for (const time of document.querySelectorAll("time[datetime]")) {
  const date = new Date(time.dateTime);
  if (!Number.isNaN(date.getTime())) {
    time.title = time.textContent;
    time.textContent = date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }
}

// A team's page while an instance starts, stops or restarts: ask the API for the states every
// 2 s and, once none is under way, show the page again (its buttons follow the states) — unless
// the reader has started filling in a form.
const watched = document.querySelector("[data-states]");
if (watched) {
  const acting = new Set(["starting", "stopping", "restarting", "suspending"]);
  const editing = () =>
    [...document.querySelectorAll("main input:not([type=hidden]), main select")].some(
      (field) =>
        field === document.activeElement ||
        (field.tagName === "SELECT"
          ? [...field.options].some((option) => option.selected !== option.defaultSelected)
          : field.value !== field.defaultValue),
    );
  const check = async () => {
    try {
      const reply = await window.fetch(watched.dataset.states, {
        headers: { accept: "application/json" },
        credentials: "same-origin",
      });
      if (reply.ok) {
        const { applications } = await reply.json();
        const states = applications.flatMap((application) =>
          application.instances.map((instance) => instance.meta.state),
        );
        if (!states.some((state) => acting.has(state)) && !editing()) {
          window.location.assign(watched.dataset.page);
          return;
        }
      }
    } catch {
      // Not reachable this time: ask again.
    }
    window.setTimeout(check, 2000);
  };
  window.setTimeout(check, 2000);
}

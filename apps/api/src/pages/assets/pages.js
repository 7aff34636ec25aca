// Flowplane's pages work without this script, except signing out; it adds the confirmation before
// a revoke, the copy button, times in the reader's own time zone, and sign-out.
/* global document, navigator, window */
"use strict";

// Sign out: POST /account/logout (same origin: the cookie and Origin go with it), then sign in again.
for (const form of document.querySelectorAll("form[data-sign-out]")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const button of form.querySelectorAll("button")) button.disabled = true;
    try {
      await window.fetch("/account/logout", { method: "POST", credentials: "same-origin" });
    } finally {
      window.location.assign("/sign-in");
    }
  });
}

// Revoke: ask here; without this script the server asks on a page of its own.
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

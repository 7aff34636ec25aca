// A pipeline's page while a deploy runs: asks for the deploy's operation every second until it
// ends, then shows its outcome (succeeded, or failed with the reason) where the page showed it
// under way. Without this script the page's "Refresh" link shows the same.
/* global document, fetch, window */
"use strict";

const section = document.querySelector("[data-operation]");
if (section) {
  const status = section.querySelector("[data-status]");
  const detail = section.querySelector("[data-detail]");
  const refresh = section.querySelector("[data-refresh]");
  const show = (operation) => {
    const ok = operation.status === "succeeded";
    status.className = `state state-${operation.status}`;
    status.textContent = ok ? "Succeeded" : "Failed";
    if (ok) {
      detail.textContent = operation.snapshot
        ? `Snapshot ${operation.snapshot.name} is deployed to ${operation.targetStage.name}.`
        : "Deployed.";
    } else {
      const error = operation.error || { error: "The deploy failed", code: "deploy_failed" };
      detail.textContent = `${error.error} (${error.code})`;
    }
    if (refresh) refresh.remove();
  };
  const ask = async () => {
    try {
      const response = await fetch(section.dataset.operation, {
        headers: { accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.ok) {
        const operation = await response.json();
        if (operation.status !== "pending") return show(operation);
      }
    } catch {
      // Asked again below: a moment without the server is not the deploy's outcome.
    }
    window.setTimeout(ask, 1000);
  };
  window.setTimeout(ask, 500);
}

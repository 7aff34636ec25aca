// An instance's page: its log box follows the log, asking the API for the lines after the last
// one shown every 2 s (the log's cursor; same origin, the session's cookie). Without this script
// the page shows the lines kept when it was loaded.
/* global document, window */
"use strict";
const box = document.querySelector("ol[data-poll]");
if (box) {
  let cursor = box.dataset.cursor || "0";
  const line = (entry) => {
    const item = document.createElement("li");
    const time = document.createElement("time");
    const at = new Date(entry.ts);
    time.dateTime = at.toISOString();
    time.textContent = at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
    const level = document.createElement("span");
    level.className = "level";
    level.textContent = `[${entry.level}]`;
    item.append(time, " ", level, ` ${entry.msg}`);
    return item;
  };
  const poll = async () => {
    try {
      const reply = await window.fetch(
        `${box.dataset.poll}?limit=1000&cursor=${encodeURIComponent(cursor)}`,
        { headers: { accept: "application/json" }, credentials: "same-origin" },
      );
      if (reply.ok) {
        const page = await reply.json();
        const follow = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
        for (const entry of page.log) box.append(line(entry));
        while (box.children.length > 1000) box.firstElementChild.remove();
        if (page.meta.next_cursor) cursor = page.meta.next_cursor;
        if (follow) box.scrollTop = box.scrollHeight;
      }
    } catch {
      // Not reachable this time: ask again.
    }
    window.setTimeout(poll, 2000);
  };
  box.scrollTop = box.scrollHeight;
  window.setTimeout(poll, 2000);
}

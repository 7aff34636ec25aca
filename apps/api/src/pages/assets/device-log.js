// A device's page: its log box follows the log as the device sends it (the log's Server-Sent
// Events, same origin, the session's cookie). The lines already on the page are not repeated.
/* global document, window */
"use strict";
const box = document.querySelector("ol[data-follow]");
if (box && window.EventSource) {
  let last = Number(box.dataset.last) || 0;
  const source = new window.EventSource(box.dataset.follow);
  source.addEventListener("message", (event) => {
    const line = JSON.parse(event.data);
    if (line.id <= last) return;
    last = line.id;
    const item = document.createElement("li");
    const time = document.createElement("time");
    const at = new Date(line.ts);
    time.dateTime = at.toISOString();
    time.textContent = at.toLocaleString();
    const level = document.createElement("span");
    level.className = "level";
    level.textContent = `[${line.level}]`;
    item.append(time, " ", level, ` ${line.msg}`);
    box.append(item);
    while (box.children.length > 1000) box.firstElementChild.remove();
  });
}

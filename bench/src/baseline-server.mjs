// The baseline: a bare node:http server, run as its own process like the API. It answers
// `<METHOD> /b/<bytes>/<status>` with a JSON body of exactly <bytes> bytes (none for 204), after
// reading the request body when there is one, so each scenario is compared with the same request and response sizes
// and nothing else: no routing, validation, authentication or database.
import { Buffer } from "node:buffer";
import { createServer } from "node:http";
import process from "node:process";

const bodies = new Map();

function bodyOf(bytes) {
  let body = bodies.get(bytes);
  if (body === undefined) {
    // {"pad":"xxx…"}: 10 bytes of frame, the rest padding; shorter sizes get a plain string.
    body =
      bytes >= 10
        ? Buffer.from(`{"pad":"${"x".repeat(bytes - 10)}"}`)
        : Buffer.from(`"${"x".repeat(Math.max(0, bytes - 2))}"`.slice(0, bytes));
    bodies.set(bytes, body);
  }
  return body;
}

function respond(res, bytes, status) {
  if (status === 204 || bytes === 0) {
    res.writeHead(status).end();
    return;
  }
  const body = bodyOf(bytes);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": body.length,
  });
  res.end(body);
}

const server = createServer((req, res) => {
  const [, prefix, bytesText, statusText] = (req.url ?? "").split("/");
  const bytes = Number(bytesText);
  const status = Number(statusText);
  if (prefix !== "b" || !Number.isInteger(bytes) || !Number.isInteger(status)) {
    res.writeHead(404).end();
    return;
  }
  // Like any server that parses bodies: read one when the request has one, else answer at once.
  if (
    req.headers["content-length"] === undefined &&
    req.headers["transfer-encoding"] === undefined
  ) {
    respond(res, bytes, status);
    return;
  }
  req.resume();
  req.on("end", () => respond(res, bytes, status));
});

server.listen({ host: "127.0.0.1", port: 0 }, () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));

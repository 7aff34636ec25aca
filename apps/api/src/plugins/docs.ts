// GET /api/ and /api/json: the OpenAPI document, behind a token like every route under /api/.
// Browsers (preferring text/html) get a self-contained Swagger UI page: its script, styles and the
// document are inlined, because the page's own asset requests could not carry the token.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import Negotiator from "negotiator";
import type { OpenAPIObject } from "trpc-to-openapi";

function viewerPage(document: OpenAPIObject): string {
  const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const asset = (name: string) => readFileSync(join(dist, name), "utf8");
  // Inside <script>, "<" must not appear raw or "</script>" in a string would end the element.
  const spec = JSON.stringify(document).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${document.info.title}</title>
<style>${asset("swagger-ui.css")}</style>
</head>
<body>
<div id="viewer"></div>
<script>${asset("swagger-ui-bundle.js").replace(/<\/script/gi, "<\\/script")}</script>
<script>
SwaggerUIBundle({ spec: ${spec}, dom_id: "#viewer", deepLinking: true, supportedSubmitMethods: [] });
</script>
</body>
</html>`;
}

export async function docsPlugin(app: FastifyInstance, opts: { document: OpenAPIObject }) {
  const json = JSON.stringify(opts.document);
  let page: string | undefined;

  app.get("/api/json", async (_request, reply) => reply.type("application/json").send(json));
  app.get("/api/", async (request, reply) => {
    const preferred = new Negotiator(request.raw).mediaType(["application/json", "text/html"]);
    if (preferred === "text/html") {
      page ??= viewerPage(opts.document);
      return reply.type("text/html; charset=utf-8").send(page);
    }
    return reply.type("application/json").send(json);
  });
}

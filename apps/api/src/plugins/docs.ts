// GET /api/ and /api/json: the OpenAPI document, behind a token like every route under /api/.
// Browsers (preferring text/html) get a self-contained Swagger UI page: its script, styles and the
// document are inlined, because the page's own asset requests could not carry the token. Its
// Content-Security-Policy allows exactly those inline blocks (by hash) and calls to the API.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import Negotiator from "negotiator";
import type { OpenAPIObject } from "trpc-to-openapi";
import { API_CSP } from "../core/security-policy";

interface ViewerPage {
  html: string;
  csp: Record<string, string[]>;
  /** The security headers with `csp`, computed once. */
  headers?: Readonly<Record<string, string>>;
}

/**
 * A Swagger UI plugin (plain script, inlined into the page) that lists every tag with all its
 * operations in the page. Swagger UI 5.35 switches its own list to a virtual one, which mounts only
 * the rows near the viewport, once its tags plus operations reach 150 — this document passed that
 * (132 operations and 19 tags) when pipelines and devices met. A virtual list hides what is not on
 * screen from the browser's find-in-page, from a screen reader's list of headings and from printing,
 * and at this size the whole list renders quickly, so this component replaces Swagger UI's
 * `operations` with the list it renders below that count: each tag (`OperationTag`, which collapses
 * and deep-links as before) wrapping its operations (`OperationContainer`).
 */
const FULL_OPERATION_LIST = `const fullOperationList = (system) => ({
  components: {
    operations: (props) => {
      const h = system.React.createElement;
      const { specSelectors, getComponent } = props;
      const tags = specSelectors.taggedOperations();
      if (tags.size === 0) return h("h3", null, "No operations defined in the document.");
      const OperationTag = getComponent("OperationTag");
      const OperationContainer = getComponent("OperationContainer", true);
      const methods = specSelectors.validOperationMethods();
      const shown = (operation) => methods.indexOf(operation.get("method")) !== -1;
      return h("div", null, tags.entrySeq().map(([tag, tagObj]) =>
        h(OperationTag, {
          key: tag, tag, tagObj, specUrl: specSelectors.url(), getComponent,
          getConfigs: props.getConfigs, oas3Selectors: props.oas3Selectors,
          layoutSelectors: props.layoutSelectors, layoutActions: props.layoutActions,
        }, h("div", { className: "operation-tag-content" }, tagObj.get("operations").filter(shown)
          .map((operation) => h(OperationContainer, {
            key: operation.get("path") + "-" + operation.get("method"), tag, op: operation,
            path: operation.get("path"), method: operation.get("method"),
            specPath: operation.get("specPath"),
          })).toArray()))).toArray());
    },
  },
});`;

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

function viewerPage(document: OpenAPIObject, baseUrl: string): ViewerPage {
  const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const asset = (name: string) => readFileSync(join(dist, name), "utf8");
  // Inside <script>, "<" must not appear raw or "</script>" in a string would end the element.
  const spec = JSON.stringify(document).replace(/</g, "\\u003c");
  const style = asset("swagger-ui.css");
  const bundle = asset("swagger-ui-bundle.js").replace(/<\/script/gi, "<\\/script");
  // "Try it out" calls the document's server (BASE_URL) with the token given under "Authorize".
  const init = `\n${FULL_OPERATION_LIST}
SwaggerUIBundle({ spec: ${spec}, dom_id: "#viewer", deepLinking: true, plugins: [fullOperationList] });\n`;
  // A bar with links to the signed-in user's pages, styled by its own block (allowed by hash too).
  const barStyle = `
body{margin:0}
.fp-bar{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.6rem 1rem;background:#1b2130;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.fp-bar a{color:#eef1f6;text-decoration:none}
.fp-bar a:hover,.fp-bar a:focus-visible{text-decoration:underline}
.fp-bar .fp-brand{margin-right:auto;font-weight:700;font-size:1.1rem}
.fp-bar nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem}
`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${document.info.title}</title>
<style>${style}</style>
<style>${barStyle}</style>
</head>
<body>
<header class="fp-bar">
<a class="fp-brand" href="/">Flowplane</a>
<nav aria-label="Account"><a href="/teams">Teams</a><a href="/settings/profile">Profile</a><a href="/settings/security">Security</a><a href="/sign-out">Sign out</a></nav>
</header>
<div id="viewer"></div>
<script>${bundle}</script>
<script>${init}</script>
</body>
</html>`;
  return {
    html,
    csp: {
      ...API_CSP,
      scriptSrc: [sha256(bundle), sha256(init)],
      styleSrc: [sha256(style), sha256(barStyle)],
      imgSrc: ["'self'", "data:"],
      connectSrc: ["'self'", new URL(baseUrl).origin],
    },
  };
}

/** GET /api/json and /api/ (in the people's /api context). */
export async function docsRoutes(
  app: FastifyInstance,
  opts: { document: OpenAPIObject; baseUrl: string },
) {
  const json = JSON.stringify(opts.document);
  let page: ViewerPage | undefined;

  app.get("/json", async (_request, reply) => reply.type("application/json").send(json));
  app.get("/", async (request, reply) => {
    const preferred = new Negotiator(request.raw).mediaType(["application/json", "text/html"]);
    if (preferred === "text/html") {
      page ??= viewerPage(opts.document, opts.baseUrl);
      page.headers ??= app.securityHeaders({
        contentSecurityPolicy: { useDefaults: false, directives: page.csp },
      });
      reply.headers(page.headers);
      return reply.type("text/html; charset=utf-8").send(page.html);
    }
    return reply.type("application/json").send(json);
  });
}

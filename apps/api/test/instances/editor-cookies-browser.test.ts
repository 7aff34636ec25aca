// Issue 32, finding 2, in a real browser: a member's flow must never receive the platform's
// session. Browsers scope cookies by host, not by port, so when editors listened on
// 127.0.0.1:<port> the platform's host-only `sid` cookie went to every instance, and a flow
// answering GET /steal with the request's Cookie header had an owner's session. Now each editor is
// served by the platform's proxy on a host of its own (`<name>.localhost:<port>`): the owner's
// Chromium opens the editor and the flow's page, and the flow sees no `sid` while the platform
// still sees the owner signed in. Also the editor's whole sign-in (the editor, the platform's
// sign-in page, the authorization code, the editor with its websocket), and that neither host
// answers for the other.
// The browser's globals, for the code page.evaluate runs in the page.
/// <reference lib="dom" />
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { WebSocket } from "ws";
import { browserMissing, launchBrowser, openBrowser, signInOnPage } from "../support/browser";
import { deployFlows, startServer, type TestServer } from "../support/harness";
import { waiter } from "../support/until";

/** A member's flow: GET /steal answers with what the request carried (its Cookie header). */
const STEAL_FLOW = [
  { id: "tab1", type: "tab", label: "Steal" },
  { id: "in1", type: "http in", z: "tab1", url: "/steal", method: "get", wires: [["fn1"]] },
  {
    id: "fn1",
    type: "function",
    z: "tab1",
    func: "msg.payload = { cookie: msg.req.headers.cookie || null, host: msg.req.headers.host }; return msg;",
    outputs: 1,
    wires: [["out1"]],
  },
  { id: "out1", type: "http response", z: "tab1", wires: [] },
];

const until = waiter(120_000, 200);

/**
 * Resolves once the page's editor websocket (Node-RED's comms) has been accepted with the
 * editor's session (`{"auth":"ok"}`): the editor is signed in, not merely drawn.
 */
function commsSignedIn(page: Page): Promise<string> {
  return new Promise((resolve) => {
    page.on("websocket", (ws) => {
      if (!ws.url().endsWith("/comms")) return;
      ws.on("framereceived", ({ payload }) => {
        if (String(payload).includes('"auth":"ok"')) resolve(ws.url());
      });
    });
  });
}

/** The editor drawn and usable: its workspace and its deploy button. */
async function editorShown(page: Page) {
  await page.locator("#red-ui-editor").waitFor({ state: "visible", timeout: 90_000 });
  await page.locator("#red-ui-header-button-deploy").waitFor({ state: "visible", timeout: 90_000 });
}

describe.skipIf(browserMissing)(
  "the platform's session and an instance's editor in Chromium",
  () => {
    let server: TestServer;
    let browser: Browser;
    let owner: { id: string; username: string; password: string };
    /** The instance's editor, e.g. http://cookie-jar.localhost:<port>. */
    let editor: string;

    beforeAll(async () => {
      // BASE_URL is where the server listens (127.0.0.1:<port>), as the browser reaches it.
      server = await startServer({ instances: true });
      browser = await launchBrowser();
      const team = await server.request("POST", "/api/v1/teams", { body: { name: "Cookies" } });
      expect(team.status, team.text).toBe(200);
      const teamId = team.body.id as string;
      owner = await server.userWithPassword();
      await addMember(server.db, { teamId, userId: owner.id, role: Role.owner });
      const member = await server.user({ teams: [{ id: teamId, role: Role.member }] });
      const application = await server.request("POST", "/api/v1/applications", {
        body: { name: "Jar", teamId },
      });
      const created = await server.request("POST", "/api/v1/projects", {
        body: { name: "cookie-jar", applicationId: application.body.id },
      });
      expect(created.status, created.text).toBe(200);
      const id = created.body.id as string;
      await until("the instance running", async () => {
        const status = await server.request("GET", `/api/v1/projects/${id}/status`);
        return status.body.meta.state === "running" ? true : undefined;
      });
      editor = (await server.request("GET", `/api/v1/projects/${id}`)).body.url as string;
      expect(new URL(editor).hostname).toBe("cookie-jar.localhost");
      // The member deploys the flow with a token for this instance (as a script would).
      const deployed = await deployFlows(server, id, member.token, STEAL_FLOW);
      expect(deployed.status, await deployed.text()).toBe(204);
    }, 240_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    test("a signed-in owner opening the editor and a member's page sends the instance no platform session", async () => {
      const { context, page } = await openBrowser(browser);
      page.setDefaultTimeout(60_000);
      await page.goto(`${server.url}/sign-in`);
      await signInOnPage(page, owner.username, owner.password);
      await page.waitForURL(`${server.url}/teams`);
      const platformCookies = await context.cookies(server.url);
      expect(platformCookies.map((cookie) => cookie.name)).toContain("sid");

      // Every request the browser sends to the instance's host, with its Cookie header as sent.
      const editorHost = new URL(editor).host;
      const sent: Promise<{ url: string; cookie: string | null }>[] = [];
      context.on("request", (request: Request) => {
        if (new URL(request.url()).host !== editorHost) return;
        sent.push(request.headerValue("cookie").then((cookie) => ({ url: request.url(), cookie })));
      });

      // The editor: signed in on the platform already, so through /account/authorize and back
      // without a sign-in page, and its websocket accepted.
      const comms = commsSignedIn(page);
      await page.goto(editor);
      await editorShown(page);
      expect(new URL(await comms).host).toBe(editorHost);

      // The member's page, in the owner's browser: what the flow receives.
      const steal = await page.goto(`${editor}/steal`);
      expect(steal?.status()).toBe(200);
      const seen = (await steal!.json()) as { cookie: string | null; host: string };
      expect(seen.host).toBe(editorHost);
      expect(seen.cookie ?? "").not.toMatch(/(^|;\s*)sid=/);

      // Nothing the browser sent to the instance's host carried the platform's session, and the
      // browser holds none for that host.
      const requests = await Promise.all(sent);
      expect(requests.length).toBeGreaterThan(1);
      for (const { url, cookie } of requests) {
        expect(cookie ?? "", url).not.toMatch(/(^|;\s*)sid=/);
      }
      expect((await context.cookies(editor)).map((cookie) => cookie.name)).not.toContain("sid");

      // The platform still sees the owner signed in.
      await page.goto(`${server.url}/teams`);
      expect(new URL(page.url()).pathname).toBe("/teams");
      const me = await page.evaluate(async () => {
        const reply = await fetch("/api/v1/user");
        return { status: reply.status, body: (await reply.json()) as { id?: string } };
      });
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(owner.id);
      await context.close();
    }, 180_000);

    test("the editor opened signed out goes to the platform's sign-in page and comes back signed in", async () => {
      const { context, page } = await openBrowser(browser);
      page.setDefaultTimeout(60_000);
      const comms = commsSignedIn(page);
      await page.goto(editor);
      // The editor's own sign-in sends the browser to the platform's page, which asks to sign in.
      await page.waitForURL((url) => url.origin === server.url && url.pathname === "/sign-in", {
        timeout: 90_000,
      });
      const next = new URL(page.url()).searchParams.get("next") ?? "";
      expect(next).toMatch(/^\/account\/authorize\?/);
      await signInOnPage(page, owner.username, owner.password);
      // Back on the editor's host, with the editor drawn and its websocket signed in.
      await page.waitForURL((url) => url.host === new URL(editor).host, { timeout: 90_000 });
      await editorShown(page);
      expect(new URL(await comms).host).toBe(new URL(editor).host);
      expect(new URL(page.url()).searchParams.get("code")).toBeNull();
      await context.close();
    }, 180_000);

    test("the platform answers nothing of its own on the instance's host", async () => {
      // The platform's API: the instance answers (404), not the platform; and a token the
      // platform would honour is refused by its proxy before it reaches the instance.
      const api = await fetch(`${editor}/api/v1/user`);
      expect(api.status).toBe(404);
      expect(await api.text()).not.toContain('"username"');
      const withToken = await fetch(`${editor}/api/v1/user`, {
        headers: { authorization: `Bearer ${server.adminToken}` },
      });
      expect(withToken.status).toBe(401);
      expect(await withToken.text()).toMatch(/credential of the platform's/);
      // The platform's sign-in page is not there for a tenant's page to imitate or frame.
      const { context, page } = await openBrowser(browser);
      const signIn = await page.goto(`${editor}/sign-in`);
      expect(signIn?.status()).toBe(404);
      expect(await page.getByLabel("Username or email").count()).toBe(0);
      expect(await page.getByRole("button", { name: "Sign in" }).count()).toBe(0);
      await context.close();
    });

    test("the proxy serves no editor on the platform's host", async () => {
      // Neither the flow's route nor Node-RED's own on the platform's host (where `sid` is sent).
      const steal = await fetch(`${server.url}/steal`);
      expect(steal.status).toBe(404);
      expect(await steal.text()).not.toContain('"cookie"');
      const login = await fetch(`${server.url}/auth/login`);
      expect(await login.text()).not.toContain('"strategy"');
      const flows = await fetch(`${server.url}/flows`, {
        headers: { authorization: `Bearer ${server.adminToken}` },
      });
      expect(flows.status).toBe(404);
      // Nor the editor's websocket.
      const opened = await new Promise<boolean>((resolve) => {
        const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/comms`);
        ws.once("open", () => {
          ws.close();
          resolve(true);
        });
        ws.once("error", () => resolve(false));
      });
      expect(opened).toBe(false);
    });
  },
);

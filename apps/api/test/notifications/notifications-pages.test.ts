// The notifications on the pages, over plain HTTP as a browser without script uses them: the bar
// of every page shows the unread count, linking to the notifications page; the page lists them
// newest first with their messages and links; its forms mark one read and unread, delete one, and
// mark every one shown read, each back on the page with a notice; a form posted from another site
// is refused and changes nothing; another person's notification is a 404 page.
import { Role } from "@flowplane/contract";
import { recordEvent } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { asPerson, type SignedInPerson, signedInPerson } from "../support/signed-in";
import { waiter } from "../support/until";

const until = waiter(10_000, 50);

let server: TestServer;
let person: SignedInPerson, other: SignedInPerson;
let teamId: string;
const ids: string[] = [];

const offline = (name: string) =>
  recordEvent(server.db, {
    type: "device.offline",
    teamId,
    entity: { type: "device", id: `dev-${name}` },
    data: { device: { id: `dev-${name}`, name } },
  });

const unreadOf = async (who: SignedInPerson) =>
  (await asPerson(server, who, "GET", "/api/v1/user/notifications")).body.unread as number;

/** The count in the bar of a page, or null without one. */
const badge = (html: string) => /<span class="unread">(\d+)/.exec(html)?.[1] ?? null;

beforeAll(async () => {
  server = await startServer({ rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } } });
  const owner = await signedInPerson(server);
  teamId = (await asPerson(server, owner, "POST", "/api/v1/teams", { name: "Works" })).body.id;
  person = await signedInPerson(server, [{ id: teamId, role: Role.member }]);
  other = await signedInPerson(server);
  for (const name of ["Boiler", "Chiller", "Dryer"]) await offline(name);
  const listed = await until("three notifications", async () => {
    const body = (await asPerson(server, person, "GET", "/api/v1/user/notifications")).body;
    return body.count === 3 ? (body.notifications as { id: string }[]) : undefined;
  });
  ids.push(...listed.map((n) => n.id));
});
afterAll(() => server?.close());

describe("notifications on the pages", () => {
  test("every page's bar shows the unread count, linking to the notifications page", async () => {
    const teams = await server.page("GET", "/teams", { sid: person.sid });
    expect(teams.status).toBe(200);
    expect(teams.html).toContain('href="/notifications"');
    expect(badge(teams.html)).toBe("3");
    expect(teams.html).toContain('<span class="visually-hidden"> unread</span>');
    // Nothing unread: no count.
    const none = await server.page("GET", "/teams", { sid: other.sid });
    expect(none.html).toContain('href="/notifications"');
    expect(badge(none.html)).toBeNull();
  });

  test("the page lists them newest first, with their messages and links", async () => {
    const page = await server.page("GET", "/notifications", { sid: person.sid });
    expect(page.status).toBe(200);
    expect(page.html).toContain("3 unread of 3.");
    const order = ["Dryer", "Chiller", "Boiler"].map((name) =>
      page.html.indexOf(`Device ${name} is offline</a>`),
    );
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(page.html).toContain(`href="/teams/${teamId}/devices/dev-Boiler"`);
    expect(page.html).toContain("Device Boiler in team Works is offline.");
    expect(page.html).toContain('aria-current="page"');
    const empty = await server.page("GET", "/notifications", { sid: other.sid });
    expect(empty.html).toContain("No notifications.");
  });

  test("its forms mark one read and unread, and delete one", async () => {
    const [dryer, chiller] = ids;
    const read = await server.page("POST", `/notifications/${dryer}/read`, {
      sid: person.sid,
      form: { read: "true", from: "/notifications?cursor=x&back=&evil=1" },
    });
    expect(read.status).toBe(303);
    expect(read.location).toBe("/notifications?cursor=x&done=read");
    expect(await unreadOf(person)).toBe(2);
    const shown = await server.page("GET", "/notifications?done=read", { sid: person.sid });
    expect(shown.html).toContain("Marked read.");
    expect(badge(shown.html)).toBe("2");
    expect(shown.html).toContain("Mark unread<span");

    const unread = await server.page("POST", `/notifications/${dryer}/read`, {
      sid: person.sid,
      form: { read: "false" },
    });
    expect(unread.location).toBe("/notifications?done=unread");
    expect(await unreadOf(person)).toBe(3);

    const deleted = await server.page("POST", `/notifications/${chiller}/delete`, {
      sid: person.sid,
      form: {},
    });
    expect(deleted.location).toBe("/notifications?done=deleted");
    const after = await server.page("GET", "/notifications", { sid: person.sid });
    expect(after.html).not.toContain("Device Chiller");
    expect(after.html).toContain("2 unread of 2.");
  });

  test("another person's notification is a 404 page; a form from another site changes nothing", async () => {
    const theirs = await server.page("POST", `/notifications/${ids[0]}/delete`, {
      sid: other.sid,
      form: {},
    });
    expect(theirs.status).toBe(404);
    const forged = await server.page("POST", `/notifications/${ids[0]}/delete`, {
      sid: person.sid,
      form: {},
      origin: "http://evil.example",
    });
    expect(forged.status).toBe(403);
    expect(forged.html).toContain("sent from another site");
    expect(await unreadOf(person)).toBe(2);
  });

  test("mark all shown read", async () => {
    const page = await server.page("GET", "/notifications", { sid: person.sid });
    const shown = [...page.html.matchAll(/name="id" value="([^"]+)"/g)].map((m) => m[1]!);
    expect(shown).toHaveLength(2);
    const all = await server.page("POST", "/notifications/read", {
      sid: person.sid,
      form: { id: shown, from: "/notifications" },
    });
    expect(all.status).toBe(303);
    expect(all.location).toBe("/notifications?done=all-read");
    expect(await unreadOf(person)).toBe(0);
    const after = await server.page("GET", all.location!, { sid: person.sid });
    expect(after.html).toContain("Marked every one shown read.");
    expect(badge(after.html)).toBeNull();
    expect(after.html).not.toContain("Mark all shown read");
  });

  test("signed out, the page leads to sign in", async () => {
    const page = await server.page("GET", "/notifications");
    expect(page.status).toBe(303);
    expect(page.location).toBe("/sign-in?next=%2Fnotifications");
  });
});

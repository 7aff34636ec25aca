// Which events notify whom, and what they say: the events' consumer (events/runner.ts) hands each
// numbered batch here, in the numbering transaction, so each event notifies once however many API
// processes share the database. An event of a team notifies its members from a role up (those who
// may see what it is about), in one statement whatever the team's size; an invitation notifies its
// invitee. Whoever acted is never notified of their own action.
import { Role } from "@flowplane/contract";
import {
  type EventConsumer,
  type EventRecord,
  notify,
  type Recipients,
  teamNames,
} from "@flowplane/db";

type Data = Record<string, unknown>;
interface Named {
  id: string;
  name: string;
}
interface Team {
  id: string;
  name: string;
}

/** What a notification says: one line, a sentence, and the page it concerns. */
interface Said {
  title: string;
  message: string;
  url: string;
  [more: string]: unknown;
}

interface Rule {
  type: string;
  /** Who hears it; none: nobody. */
  to(event: EventRecord): Recipients | undefined;
  say(event: EventRecord, team: Team): Said;
}

const named = (value: unknown): Named => {
  const v = (value ?? {}) as Partial<Named>;
  return { id: String(v.id ?? ""), name: String(v.name ?? v.id ?? "") };
};
const teamPath = (team: Team) => `/teams/${encodeURIComponent(team.id)}`;
/** A reason or an error as the event carried it, kept to a sentence's length. */
const short = (text: unknown) =>
  // By characters, not UTF-16 units: half an emoji is JSON that jsonb refuses.
  typeof text === "string" ? Array.from(text).slice(0, 300).join("") : "";
const roleNames: Record<number, string> = {
  [Role.owner]: "owner",
  [Role.member]: "member",
  [Role.viewer]: "viewer",
  [Role.dashboard]: "dashboard user",
};

/** The members of the event's team with at least `minRole`. */
const members = (minRole: number) => (event: EventRecord) =>
  event.teamId === null ? undefined : { team: event.teamId, minRole };

function deviceRule(type: string, what: string, detail: (data: Data) => string): Rule {
  return {
    type,
    to: members(Role.viewer),
    say(event, team) {
      const device = named(event.data.device);
      return {
        title: `Device ${device.name} ${what}`,
        message: `Device ${device.name} in team ${team.name} ${what}${detail(event.data)}.`,
        url: `${teamPath(team)}/devices/${encodeURIComponent(device.id)}`,
        device,
      };
    },
  };
}

function rolloutRule(verb: "rolled-back" | "failed"): Rule {
  const what = verb === "failed" ? "failed" : "was rolled back";
  return {
    type: `rollout-${verb}`,
    to: members(Role.member),
    say(event, team) {
      const rollout = named(event.data.rollout);
      const snapshot = named(event.data.snapshot);
      const reason = short(event.data.reason);
      return {
        title: `Rollout of ${snapshot.name} ${what}`,
        message: `The rollout of snapshot ${snapshot.name} in team ${team.name} ${what}${reason && `: ${reason}`}.`,
        url: `${teamPath(team)}/rollouts/${encodeURIComponent(rollout.id)}`,
        rollout: { id: rollout.id },
        snapshot,
      };
    },
  };
}

/** By event type: the events that notify. */
const RULES: Record<string, Rule> = {
  "team.user.invited": {
    type: "team-invite",
    to: (event) => {
      const invitation = event.data.invitation as { id?: unknown } | undefined;
      return typeof invitation?.id === "string" ? { invitation: invitation.id } : undefined;
    },
    say(event, team) {
      const invitation = event.data.invitation as { id: string; role: number };
      const role = roleNames[invitation.role] ?? "member";
      return {
        title: `Invitation to ${team.name}`,
        message: `You are invited to join team ${team.name} as ${role}: accept or reject it on your Teams page.`,
        url: "/teams",
        invitation: { id: invitation.id, role: invitation.role },
      };
    },
  },
  "device.offline": deviceRule("device-offline", "is offline", () => ""),
  // The agent's report: its Node-RED crashed, or runs in safe mode (`state: "safe"`).
  "device.crashed": deviceRule("device-crashed", "crashed", (data) =>
    data.state === "safe" ? " and runs in safe mode" : "",
  ),
  "project.crashed": {
    type: "instance-crashed",
    to: members(Role.viewer),
    say(event, team) {
      const instance = named(event.data.project);
      const reason = short(event.data.reason);
      return {
        title: `Instance ${instance.name} crashed`,
        message: `Instance ${instance.name} in team ${team.name} crashed${reason && `: ${reason}`}.`,
        url: `${teamPath(team)}/instances`,
        instance,
      };
    },
  },
  "application.pipeline.stage-deploy-failed": {
    type: "pipeline-deploy-failed",
    to: members(Role.member),
    say(event, team) {
      const pipeline = named(event.data.pipeline);
      const target = named(event.data.targetStage);
      const error = event.data.error as { error?: unknown } | undefined;
      const reason = short(error?.error);
      return {
        title: `Deploy to ${target.name} failed`,
        message: `The deploy of pipeline ${pipeline.name} to stage ${target.name} in team ${team.name} failed${reason && `: ${reason}`}.`,
        url: `${teamPath(team)}/pipelines/${encodeURIComponent(pipeline.id)}`,
        pipeline,
        targetStage: target,
      };
    },
  },
  "application.rollout.rolled-back": rolloutRule("rolled-back"),
  "application.rollout.failed": rolloutRule("failed"),
};

/** The events' consumer that writes notifications. */
export const notifyOfEvents: EventConsumer = async (trx, events) => {
  const concerning = events.filter((event) => RULES[event.type] && event.teamId !== null);
  if (concerning.length === 0) return;
  const teams = await teamNames(trx, [...new Set(concerning.map((event) => event.teamId!))]);
  for (const event of concerning) {
    const rule = RULES[event.type]!;
    const team = teams.get(event.teamId!);
    const to = rule.to(event);
    // A team deleted since: nobody is left to tell.
    if (!team || !to) continue;
    await notify(trx, to, {
      type: rule.type,
      data: { ...rule.say(event, team), team },
      eventSeq: event.seq,
      createdAt: event.createdAt,
      actorId: event.actorId,
    });
  }
};

// Teams: the teams, their members and invitations, and team types.
export * from "./invitations";
export * from "./members";
export * from "./team-types";
export * from "./teams";

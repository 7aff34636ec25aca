// Teams: the teams, their roles, members, invitations and team types.
export * from "./invitations";
export * from "./members";
export * from "./roles";
export * from "./team-types";
export * from "./teams";

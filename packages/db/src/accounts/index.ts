// Accounts: users and their sign-in sessions.
export * from "./sessions";
export * from "./users";

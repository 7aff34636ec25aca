// Notifications: a person's inbox, and how an event becomes rows in it.
export * from "./inbox";
export * from "./fan-out";

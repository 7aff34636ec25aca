import { randomBase62 } from "@flowplane/auth";

/** A new opaque id: 12 random base62 characters (~71 bits), neither guessable nor sequential. */
export function newId(): string {
  return randomBase62(12);
}

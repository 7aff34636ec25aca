// A device's one-time code: words a person types on the device (`flowfuse-device-agent --otc
// <code> --ff-url <url>`), which the agent sends once, base64-encoded, as its bearer to fetch the
// device's credentials. FlowFuse's is three words; ours is four from BIP39's English list (2048
// words, 3–8 letters, unique in their first four): 44 bits instead of about 33, since a code is a
// bearer that anyone who guesses it within its day can trade for the device's credentials (and so
// its flows' secrets). The agent takes any code of 8 characters or more.
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { randomInt } from "node:crypto";
import { bearerToken } from "./token-format";

const WORDS = 4;
const KNOWN = new Set(wordlist);
const SHAPE = new RegExp(`^[a-z]{3,8}(-[a-z]{3,8}){${WORDS - 1}}$`);

/** A new code, e.g. `ocean-pistol-brave-tunnel`, each word drawn from the OS's random source. */
export function generateOneTimeCode(): string {
  return Array.from({ length: WORDS }, () => wordlist[randomInt(wordlist.length)]).join("-");
}

/** Whether the text has a code's shape: four words of the list, joined by `-`. No I/O. */
export function isOneTimeCode(text: string): boolean {
  return SHAPE.test(text) && text.split("-").every((word) => KNOWN.has(word));
}

/**
 * The code in an `Authorization: Bearer <base64(code)>` header (the agent's form), when the
 * header has that form and the code a code's shape; else undefined.
 */
export function oneTimeCodeFromBearer(header: string | undefined): string | undefined {
  const value = bearerToken(header);
  if (value === undefined || value.length > 64) return undefined;
  const text = Buffer.from(value, "base64").toString("latin1");
  // Only the canonical encoding: Node's decoder skips characters it does not know.
  if (Buffer.from(text, "latin1").toString("base64") !== value) return undefined;
  return isOneTimeCode(text) ? text : undefined;
}

// aedes-persistence-level ships no types: the one call we make.
declare module "aedes-persistence-level" {
  import type { Level } from "level";
  export default function persistence(db: Level<string, unknown> | Level): unknown;
}

// The first administrator's first password, in DATA_DIR/initial-admin-password (bootstrap.ts). It
// is a help for the first sign-in only: the sign-in page points at it while the file is there, and
// the file goes as soon as the password it holds is changed, so the machine keeps no password that
// a person no longer uses.
import { verifyPassword } from "@flowplane/auth";
import { access, readFile, rm } from "node:fs/promises";

export class InitialPassword {
  constructor(private readonly file: string) {}

  /** Whether the first password is still in its file (the sign-in page's "First start?" hint). */
  async pending(): Promise<boolean> {
    return access(this.file).then(
      () => true,
      () => false,
    );
  }

  /**
   * After a user's password changed from `oldHash`: when the file holds that old password, the
   * file is deleted. Only a first start writes it, so this costs one hash check, once.
   */
  async replaced(oldHash: string | null): Promise<void> {
    if (oldHash === null) return;
    let password: string;
    try {
      password = (await readFile(this.file, "utf8")).trim();
    } catch {
      return;
    }
    if (await verifyPassword(password, oldHash)) await rm(this.file, { force: true });
  }
}

declare module "../core/trpc" {
  interface Context {
    /** The first administrator's first password file (none: not kept, e.g. in tests). */
    initialPassword?: InitialPassword;
  }
}

declare module "../plugins/area" {
  interface AppOptions {
    /**
     * The first administrator's first password file (DATA_DIR/initial-admin-password): the sign-in
     * page mentions it while it exists, and it is deleted once that password is changed.
     */
    initialPasswordFile?: string;
  }
}

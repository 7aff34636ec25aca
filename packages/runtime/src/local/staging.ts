// How a sandbox run under an instance's own user id reaches the host directories it binds (the
// staging, sandbox.ts's `startSandboxed`): a mount namespace of the sandbox's own, made by the
// platform (root), with each directory bound into a small tmpfs on /run.
import { existsSync } from "node:fs";

/**
 * Where bubblewrap, run as an instance's user id, finds the host directories it binds. It could
 * not reach them at their paths: a directory above them may be closed to other users (a checkout
 * under /root, a CI runner's private temporary directory, DATA_DIR at 0700), and bubblewrap 0.8
 * resolves even `--bind-fd`'s descriptor back to its path (realpath) before it mounts. So the
 * platform (root) makes a mount namespace of the sandbox's own, mounts a small tmpfs on /run
 * there (in that namespace only) and binds each directory into it as /run/<n>, then drops to the
 * instance's ids (setpriv: user, group, no supplementary groups) and runs bubblewrap on those.
 * Nothing of the host changes: no mode, no owner, no mount outside that namespace.
 */
export function stagedSources() {
  const paths: string[] = [];
  return {
    add(path: string): string {
      paths.push(path);
      return `${STAGE}/${paths.length - 1}`;
    },
    command(bwrap: string, args: readonly string[], uid: number, gid: number): string[] {
      return [
        UNSHARE,
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        STAGE_SCRIPT,
        "sh",
        ...paths,
        "--",
        SETPRIV,
        `--reuid=${uid}`,
        `--regid=${gid}`,
        "--clear-groups",
        "--",
        bwrap,
        ...args,
      ];
    },
  };
}

/** The staging's own directory, and the programs it runs (util-linux, at their usual paths). */
const STAGE = "/run";
const UNSHARE = firstExisting(["/usr/bin/unshare", "/bin/unshare"]);
const SETPRIV = firstExisting(["/usr/bin/setpriv", "/bin/setpriv"]);
/** `sh -c` with the directories to bind as arguments, then `--` and what to run. */
const STAGE_SCRIPT = `set -e
/bin/mount -t tmpfs -o mode=0755,size=64k,nosuid,nodev,noexec flowplane ${STAGE}
i=0
while [ "$1" != "--" ]; do
  /bin/mkdir "${STAGE}/$i"
  /bin/mount --rbind -- "$1" "${STAGE}/$i"
  i=$((i + 1))
  shift
done
shift
exec "$@"`;

function firstExisting(paths: readonly string[]): string {
  return paths.find((path) => existsSync(path)) ?? paths[0]!;
}

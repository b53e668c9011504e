/**
 * Processes of this host, as the local tools see them.
 */

/**
 * Whether the process `pid` of this host is running: signal 0 probes without signalling, and
 * EPERM means it runs under another user (alive).
 * @param pid a process id of this host (its PID namespace)
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

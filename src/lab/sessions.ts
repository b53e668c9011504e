/**
 * Credentials and Redfish sessions of the lab's BMCs (DSP0266 §"Session management").
 *
 * One user (name and password given at start) may authenticate with HTTP Basic or create a
 * session: `POST` to the sessions collection answers a token (`X-Auth-Token`) that
 * authenticates later requests until the session is deleted or stays unused for
 * `sessionTimeoutS` seconds (the SessionService's `SessionTimeout`). Credentials are compared
 * in constant time; tokens are 192 random bits.
 */
import crypto from 'node:crypto';

/** A Redfish session. */
export interface LabSession {
  readonly id: string;
  /** The `X-Auth-Token` value. Secret: never logged. */
  readonly token: string;
  readonly userName: string;
  /** Creation time, epoch ms. */
  readonly createdAt: number;
  /** Last use, epoch ms; the session expires `sessionTimeoutS` after it. */
  lastUsedAt: number;
}

/** Options of {@link SessionStore}. */
export interface SessionStoreOptions {
  readonly username: string;
  readonly password: string;
  /** Idle time after which a session expires, seconds (30…86400, default 1800). */
  readonly sessionTimeoutS?: number;
  /** Clock, epoch ms (tests). */
  readonly now?: () => number;
}

/** The lab's user and its live sessions. */
export class SessionStore {
  /** Idle timeout of a session, seconds. */
  readonly timeoutS: number;
  readonly #sessions = new Map<string, LabSession>();
  readonly #byToken = new Map<string, LabSession>();
  readonly #userDigest: Buffer;
  readonly #passwordDigest: Buffer;
  readonly #now: () => number;

  /** @throws RangeError when `sessionTimeoutS` is out of range. */
  constructor(options: SessionStoreOptions) {
    this.timeoutS = options.sessionTimeoutS ?? 1800;
    if (!(this.timeoutS >= 30 && this.timeoutS <= 86_400)) {
      throw new RangeError(`sessionTimeoutS must be 30…86400, got ${this.timeoutS}`);
    }
    this.#now = options.now ?? Date.now;
    this.#userDigest = digest(options.username);
    this.#passwordDigest = digest(options.password);
  }

  /** True when `userName`/`password` are the lab's credentials (constant-time comparison). */
  checkCredentials(userName: string, password: string): boolean {
    const userOk = crypto.timingSafeEqual(digest(userName), this.#userDigest);
    const passOk = crypto.timingSafeEqual(digest(password), this.#passwordDigest);
    return userOk && passOk;
  }

  /** Creates a session for valid credentials, or returns null. */
  create(userName: string, password: string): LabSession | null {
    if (!this.checkCredentials(userName, password)) return null;
    this.#expire();
    const now = this.#now();
    const session: LabSession = {
      id: crypto.randomBytes(8).toString('hex'),
      token: crypto.randomBytes(24).toString('base64url'),
      userName,
      createdAt: now,
      lastUsedAt: now,
    };
    this.#sessions.set(session.id, session);
    this.#byToken.set(session.token, session);
    return session;
  }

  /** The live session with `token`, refreshing its idle timer; null when none or expired. */
  byToken(token: string): LabSession | null {
    this.#expire();
    const s = this.#byToken.get(token);
    if (s === undefined) return null;
    s.lastUsedAt = this.#now();
    return s;
  }

  /** The live session `id`, or null. */
  get(id: string): LabSession | null {
    this.#expire();
    return this.#sessions.get(id) ?? null;
  }

  /** Live sessions, oldest first. */
  list(): readonly LabSession[] {
    this.#expire();
    return [...this.#sessions.values()];
  }

  /** Ends session `id`; false when there was none. */
  delete(id: string): boolean {
    const s = this.#sessions.get(id);
    if (s === undefined) return false;
    this.#sessions.delete(id);
    this.#byToken.delete(s.token);
    return true;
  }

  /** Ends every session, as a BMC reboot would (tests of session re-creation). */
  clear(): void {
    this.#sessions.clear();
    this.#byToken.clear();
  }

  #expire(): void {
    const limit = this.#now() - this.timeoutS * 1000;
    for (const s of this.#sessions.values()) if (s.lastUsedAt < limit) this.delete(s.id);
  }
}

function digest(s: string): Buffer {
  return crypto.createHash('sha256').update(s, 'utf8').digest();
}

/**
 * Dashboard sessions, kept in the store so every process of a fleet knows
 * them (a load balancer may send each page to another process). The session
 * id is a bearer secret like a key: only its SHA-256 is stored.
 */
export interface StoredSession {
  /** Lower-case hex SHA-256 of the session id (the cookie value). */
  idHash: string;
  keyId: string;
  accountId: string;
  /** The SHA-256 of the admin key that logged in; each page looks the key up by it, so revoking the key ends the session. */
  keyHash: string;
  expiresAt: number;
}

export interface SessionStore {
  createSession(session: StoredSession): Promise<void>;
  /** The session, or null when unknown or expired at `now`. */
  getSession(idHash: string, now: number): Promise<StoredSession | null>;
  deleteSession(idHash: string): Promise<void>;
  /** Removes sessions expired before `now`; returns how many. */
  pruneSessions(now: number): Promise<number>;
}
